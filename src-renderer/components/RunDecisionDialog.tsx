/**
 * Approve or reject a held run: a note (the agent receives it with the next attempt) and, when
 * approving, an optional new spend cap. The Inbox and the Runs view open it; the caller sends the
 * decision (the store's decideRun).
 */
import { useState } from 'react';
import type { PerAttemptBudget } from '../../src-main/common/schemas';
import { capFromDraft, EMPTY_CAP, type CapDraft } from '../lib/cap-draft';
import { CapFields } from './CapFields';
import { ReasonDialog } from './Dialog';

export function RunDecisionDialog({
  decision,
  stoppedByCap,
  onConfirm,
  onClose,
}: {
  decision: 'approve' | 'reject';
  /** The run was held because it passed its spend cap. */
  stoppedByCap: boolean;
  onConfirm: (note: string, budget: PerAttemptBudget | undefined) => Promise<unknown>;
  onClose: () => void;
}) {
  // Approving may raise the cap that stopped it (else the next attempt runs under the same cap).
  const [cap, setCap] = useState<CapDraft>(EMPTY_CAP);
  const parsed = capFromDraft(cap);
  return (
    <ReasonDialog
      title={decision === 'approve' ? 'Approve the run' : 'Reject the run'}
      explain={
        decision === 'approve'
          ? 'The run is dispatched again. The agent receives your note with it, with your name and the time, and continues from the steps already done.'
          : 'The run stays failed, marked rejected, and is not run again. The item is acknowledged with it.'
      }
      confirmLabel={decision === 'approve' ? 'Approve' : 'Reject'}
      danger={decision === 'reject'}
      extra={decision === 'approve' ? <CapFields value={cap} onChange={setCap} help={stoppedByCap ? 'It was stopped by its spend cap: without a new one it runs under the same cap again.' : 'Leave empty to keep the job’s cap.'} /> : null}
      validateExtra={() => ('problem' in parsed ? parsed.problem : null)}
      onConfirm={(note) => onConfirm(note, 'budget' in parsed && parsed.budget ? parsed.budget : undefined)}
      onClose={onClose}
      testId="run-decision-dialog"
    />
  );
}
