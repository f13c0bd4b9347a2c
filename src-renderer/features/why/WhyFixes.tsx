/**
 * The fixes beside an answer of "Why didn't it run?": each a button that asks for a reason and
 * does it (set the missing signal for the slot's key, resume the job, turn the kill switch off,
 * enable the job, queue the slot for backfill, run a past slot nobody ran). The answer is asked
 * again when what it shows changes.
 */
import { useState } from 'react';
import type { Explanation, JobSummary } from '../../../src-main/common/job-schema';
import { ReasonDialog } from '../../components/Dialog';
import { useActions } from '../../store/react';
import { fixesFor, type WhyFix } from './logic';

const KEY = (f: WhyFix) => (f.kind === 'signal' ? `signal-${f.name}-${f.key}` : f.kind);

function label(f: WhyFix): string {
  switch (f.kind) {
    case 'signal':
      return `Set signal ${f.name} for ${f.key}`;
    case 'resume':
      return 'Resume the job';
    case 'killSwitchOff':
      return 'Turn the kill switch off';
    case 'enable':
      return 'Enable the job';
    case 'backfill':
      return `Queue ${f.slot} for backfill`;
    case 'runSlot':
      return `Run ${f.slot} now`;
  }
}

function explain(f: WhyFix, job: JobSummary): string {
  switch (f.kind) {
    case 'signal':
      return `Says ${f.name} is ready for ${f.key}: a slot of ${job.name} waiting on it runs at its next check (a slot whose window has closed needs a backfill too).`;
    case 'resume':
      return `${job.name} was paused; waiting slots are looked at again at once.`;
    case 'killSwitchOff':
      return 'Every job may be dispatched again, not only this one.';
    case 'enable':
      return `${job.name} starts again from now: slots that fell due while it was disabled are not caught up.`;
    case 'backfill':
      return `The slot goes to the backfill queue of ${job.name}: it runs at the next window (its cap permitting, oldest first) or when you press Run now there.`;
    case 'runSlot':
      return `Claims slot ${f.slot} and runs it now, overriding the schedule, a pause and the preconditions (one run per slot).`;
  }
}

export function WhyFixes({ e, job, onDone }: { e: Explanation; job: JobSummary; onDone: () => void }) {
  const { setSignal, jobAction, setKillSwitch, requestBackfill } = useActions();
  const [doing, setDoing] = useState<WhyFix | null>(null);
  const fixes = fixesFor(e);
  if (fixes.length === 0) return null;
  const run = (f: WhyFix, reason: string): Promise<unknown> => {
    switch (f.kind) {
      case 'signal':
        return setSignal({ name: f.name, key: f.key, reason });
      case 'resume':
        return jobAction('resume', job, reason);
      case 'killSwitchOff':
        return setKillSwitch(false, reason);
      case 'enable':
        return jobAction('enable', job, reason);
      case 'backfill':
        return requestBackfill(job.id, f.slot, reason);
      case 'runSlot':
        return jobAction('trigger', job, reason, { slot: f.slot });
    }
  };
  return (
    <div className="actions-row why-fixes" data-testid="why-fixes">
      {fixes.map((f) => (
        <button key={KEY(f)} className={`btn btn-small${f.kind === 'killSwitchOff' ? '' : ' btn-primary'}`} onClick={() => setDoing(f)} data-testid={`why-fix-${f.kind}`}>
          {label(f)}
        </button>
      ))}
      {doing ? (
        <ReasonDialog title={label(doing)} explain={explain(doing, job)} confirmLabel={label(doing)} testId={`dialog-why-fix-${doing.kind}`} onConfirm={async (reason) => {
            await run(doing, reason);
            onDone();
          }} onClose={() => setDoing(null)} />
      ) : null}
    </div>
  );
}
