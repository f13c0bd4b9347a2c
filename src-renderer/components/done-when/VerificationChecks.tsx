/** A verification's evidence (PROTOCOL §13): each check with pass/fail, how long it took and its output's tail. */
import { describeVerification, type Verification } from '../../../src-main/common/verify';

/** The headline: on a failure only how many checks failed, since each one's reason is listed below it. */
function headline(v: Verification): string {
  if (v.passed) return describeVerification(v);
  const failed = v.checks.filter((c) => !c.passed).length;
  const what = v.checks.length === 1 ? 'its check failed' : `${failed} of ${v.checks.length} checks failed`;
  return v.before ? `Not done yet: ${what}` : `Not verified: ${what}`;
}

export function VerificationChecks({ verification }: { verification: Verification }) {
  return (
    <div className="verification" data-testid="verification">
      <p className={verification.passed ? 'verification-ok' : 'verification-failed'}>
        {headline(verification)} <span className="muted small">(attempt {verification.attempt})</span>
      </p>
      <ul className="verification-checks">
        {verification.checks.map((c) => (
          <li key={c.name} data-testid="verification-check" data-passed={c.passed}>
            <span aria-hidden="true">{c.passed ? '✓' : '✗'}</span> <strong>{c.name}</strong> {c.passed ? 'passed' : 'failed'}: {c.detail}{' '}
            <span className="muted small">({c.durationMs < 1000 ? `${c.durationMs} ms` : `${(c.durationMs / 1000).toFixed(1)} s`})</span>
            {c.outputTail ? (
              <details>
                <summary>Output</summary>
                <pre className="mono small">{c.outputTail}</pre>
              </details>
            ) : null}
          </li>
        ))}
      </ul>
    </div>
  );
}
