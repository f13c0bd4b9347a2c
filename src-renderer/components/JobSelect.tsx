import type { JobSummary } from '../../src-main/common/job-schema';

/** The "Job" picker of the Runs and Why views. */
export function JobSelect({ jobs, value, onPick, testId }: { jobs: JobSummary[]; value: string | null; onPick: (id: string) => void; testId: string }) {
  return (
    <label className="inline-field">
      <span className="muted small">Job</span>
      <select value={value ?? ''} onChange={(e) => onPick(e.target.value)} aria-label="Job" data-testid={testId}>
        {value === null ? <option value="">—</option> : null}
        {jobs.map((j) => (
          <option key={j.id} value={j.id}>
            {j.name}
          </option>
        ))}
      </select>
    </label>
  );
}
