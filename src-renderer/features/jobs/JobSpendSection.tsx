/** The job editor's "Spend" section: the cap of one run, and what the job will spend (use-job-spend). */
import type { JobIssue } from '../../../src-main/common/job-schema';
import { CapFields } from '../../components/CapFields';
import { FieldIssues } from '../../components/FormField';
import { capFromDraft, capWords } from '../../lib/cap-draft';
import { useActions } from '../../store/react';
import type { JobForm } from './form';
import { useJobSpend } from './use-job-spend';

export function JobSpendSection({ form, patch, issues, jobId, version }: { form: JobForm; patch: (p: Partial<JobForm>) => void; issues: readonly JobIssue[]; jobId: string | null; version: number | null }) {
  const spend = useJobSpend(jobId, version, useActions());
  const cap = capFromDraft({ usd: form.budgetUsd, tokens: form.budgetTokens });
  return (
    <section className="panel editor-section" data-testid="section-spend">
      <header className="panel-head">
        <h2>Spend</h2>
        <span className="muted small">A run that passes its cap is stopped at once and held for you; what it made so far is kept.</span>
      </header>
      <p className="policy" data-testid="spend-sentence">
        {'budget' in cap && cap.budget ? `Each run may spend at most ${capWords(cap.budget).replace(/ per run$/, '')}; past it the run is stopped and waits for you to approve it (with a new cap if you like).` : 'No cap per run: a run may spend what it needs (daily caps still apply).'}
      </p>
      <div className="section-body" data-field="budget">
        <CapFields label="Spend cap per run" value={{ usd: form.budgetUsd, tokens: form.budgetTokens }} onChange={(v) => patch({ budgetUsd: v.usd, budgetTokens: v.tokens })} help="Empty for no cap. Counted from the tokens the agent reports as it works." />
        <FieldIssues issues={issues.filter((i) => i.field === 'budget' || i.field.startsWith('budget.'))} />
        {jobId ? (
          <p className="small" data-testid="job-forecast">
            {spend.error ?? spend.line ?? 'Working out the forecast…'}
          </p>
        ) : (
          <p className="small muted">Once the job is saved and has run, this shows what it will spend a day.</p>
        )}
      </div>
    </section>
  );
}
