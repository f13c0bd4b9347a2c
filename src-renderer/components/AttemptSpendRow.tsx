/** The task and run panes' "Spend" row: this attempt's spend against its cap as a bar ("$0.04 of $0.10"), or what it spent when it has no cap. */
import type { AttemptSpend } from '../../src-main/common/prices';
import { spentOfCap, dollars } from '../lib/spend-words';
import { ProgressBar } from './States';

const FROM: Record<string, string> = { run: 'the cap given when it was approved', job: 'the job’s cap per run', task: 'the task’s cap per attempt' };

/** `spend`: from store/use-attempt-spend (ticking as the agent works); nothing is shown before the first attempt of a subject without a cap. */
export function AttemptSpendRow({ spend: s }: { spend: AttemptSpend | null }) {
  if (!s || (s.attempt === 0 && !s.cap)) return null;
  const bars = spentOfCap(s.spent, s.cap);
  return (
    <>
      <dt>Spend</dt>
      <dd data-testid="attempt-spend">
        {bars.length === 0 ? (
          <span className="small">
            {dollars(s.spent.costUsd)} and {s.spent.tokens.toLocaleString('en-US')} tokens this attempt <span className="muted">· no cap</span>
          </span>
        ) : (
          bars.map((b) => (
            <div key={b.what} className={b.over ? 'spend-bar text-bad' : 'spend-bar'}>
              <ProgressBar fraction={b.fraction} label={`${b.words} this attempt`} />
              <span className="small num">
                {b.words}
                {b.over ? ' · cap reached' : ''}
              </span>
            </div>
          ))
        )}
        {s.cap ? <div className="small muted">This attempt, against {FROM[s.capFrom ?? 'job']}.</div> : null}
      </dd>
    </>
  );
}
