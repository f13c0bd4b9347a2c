import type { Job } from '../../../src-main/common/job-schema';
import { ReasonDialog } from '../../components/Dialog';
import type { JobActionKind } from '../../store/slices/jobs';
import { useActions } from '../../store/react';
import { TriggerDialog } from './TriggerDialog';

export const JOB_ACTION_META: Record<JobActionKind, { verb: string; danger?: boolean; explain: string }> = {
  trigger: {
    verb: 'Trigger now',
    explain:
      'Runs a slot now — it says which before it runs: the slot the current instant falls in, the one before, the next one early, or one you name — overriding the schedule and a pause, and the preconditions unless you ask to check them. Still one run per slot. Refused while the kill switch is on or the job is disabled.',
  },
  pause: {
    verb: 'Pause',
    danger: true,
    explain: 'Nothing of this job is dispatched while it is paused; a slot whose window closes meanwhile is recorded as “skipped: paused”. Your name and reason show in the list and in “Why didn’t it run?”. You can still trigger it by hand.',
  },
  resume: { verb: 'Resume', explain: 'Slots waiting because of the pause are looked at again at once.' },
  enable: { verb: 'Enable', explain: 'The job starts again from now: slots that fell due while it was disabled are not caught up.' },
  disable: {
    verb: 'Disable',
    danger: true,
    explain: 'The runner stops looking at this job; waiting slots are recorded as “skipped: disabled”. Runs already dispatched finish.',
  },
};

export function JobActionDialog({ job, kind, onClose, onDone }: { job: Pick<Job, 'id' | 'name'>; kind: JobActionKind; onClose: () => void; onDone?: () => void }) {
  if (kind === 'trigger') return <TriggerDialog job={job} onClose={onClose} {...(onDone ? { onDone } : {})} />;
  return <ReasonOnlyJobDialog job={job} kind={kind} onClose={onClose} {...(onDone ? { onDone } : {})} />;
}

function ReasonOnlyJobDialog({ job, kind, onClose, onDone }: { job: Pick<Job, 'id' | 'name'>; kind: JobActionKind; onClose: () => void; onDone?: () => void }) {
  const { jobAction } = useActions();
  const meta = JOB_ACTION_META[kind];
  return (
    <ReasonDialog
      title={`${meta.verb} — ${job.name}`}
      testId={`dialog-job-${kind}`}
      explain={meta.explain}
      danger={meta.danger}
      confirmLabel={meta.verb}
      onConfirm={async (reason) => {
        await jobAction(kind, job, reason);
        onDone?.();
      }}
      onClose={onClose}
    />
  );
}
