import { useId, useState } from 'react';
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
    explain: 'Nothing new of this job is dispatched while it is paused; a slot whose window closes meanwhile is recorded as “skipped: paused”. Your name, reason and the end of the pause show wherever the job appears and in “Why didn’t it run?”. You can still trigger it by hand.',
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
  const [until, setUntil] = useState('');
  const [drain, setDrain] = useState(false);
  const untilId = useId();
  const untilAt = until === '' ? null : new Date(until).getTime();
  return (
    <ReasonDialog
      title={`${meta.verb} — ${job.name}`}
      testId={`dialog-job-${kind}`}
      explain={meta.explain}
      danger={meta.danger}
      confirmLabel={meta.verb}
      extra={
        kind === 'pause' ? (
          <>
            <label className="field" htmlFor={untilId}>
              <span className="field-label">
                Until <span className="muted small">optional: it resumes by itself then (your local time)</span>
              </span>
              <input id={untilId} type="datetime-local" value={until} onChange={(e) => setUntil(e.target.value)} data-testid="pause-until" />
            </label>
            <label className="check-row">
              <input type="checkbox" checked={drain} onChange={(e) => setDrain(e.target.checked)} data-testid="pause-drain" /> Finish running work first: runs already started may still retry and finish; only new slots wait
            </label>
          </>
        ) : undefined
      }
      validateExtra={() => (kind === 'pause' && untilAt !== null && !(untilAt > Date.now()) ? 'Choose an end of the pause in the future, or leave it empty.' : null)}
      onConfirm={async (reason) => {
        await jobAction(kind, job, reason, kind === 'pause' ? { until: untilAt === null ? null : new Date(untilAt).toISOString(), drain } : undefined);
        onDone?.();
      }}
      onClose={onClose}
    />
  );
}
