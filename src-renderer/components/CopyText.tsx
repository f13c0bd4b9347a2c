import { useState } from 'react';

/**
 * Text to copy exactly (a secret, a command): shown whole in a code block that selects itself on
 * focus, with a Copy button. Without a clipboard the block says to copy it by hand.
 */
export function CopyText({ text, label, testId, autoFocus }: { text: string; label: string; testId?: string; autoFocus?: boolean }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  return (
    <div className="copy-text">
      <div className="copy-row">
        <pre className="copy-code" data-testid={testId} tabIndex={0} aria-label={label} onFocus={(e) => window.getSelection()?.selectAllChildren(e.currentTarget)}>
          {text}
        </pre>
        <button
          type="button"
          className="btn btn-small"
          data-autofocus={autoFocus ? true : undefined}
          aria-label={`Copy ${label}`}
          onClick={() => {
            if (!navigator.clipboard) {
              setCopied('failed');
              return;
            }
            navigator.clipboard.writeText(text).then(
              () => setCopied('yes'),
              () => setCopied('failed'),
            );
          }}
        >
          {copied === 'yes' ? 'Copied ✓' : 'Copy'}
        </button>
      </div>
      {copied === 'failed' ? <div className="field-error">The clipboard is not available here: select the text and copy it by hand.</div> : null}
    </div>
  );
}
