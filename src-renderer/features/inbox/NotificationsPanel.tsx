import { useId, useState } from 'react';
import { INBOX_KINDS, WEBHOOK_FORMATS, type Delivery, type InboxKind, type NotificationSettingsView, type WebhookFormat, type WebhookTestResult } from '../../../src-main/common/attention';
import { Badge } from '../../components/Badge';
import { CopyText } from '../../components/CopyText';
import { Dialog } from '../../components/Dialog';
import { EmptyState, ErrorBanner, Spinner } from '../../components/States';
import { RelativeTime } from '../../components/Time';
import { toUiError, type UiError } from '../../lib/errors';
import { useActions, useConsole, useWatch } from '../../store/react';
import { deliveryWords, draftFromView, draftProblems, draftToInput, FORMAT_LABELS, newHookDraft, revealedSecrets, type HookDraft, type NotificationsDraft, type RevealedSecret } from './notifications-form';
import { kindLabel } from './logic';

/** Secrets shown this once: of the webhooks a save added, or the one a rotation made. */
interface Shown {
  why: 'added' | 'rotated';
  secrets: RevealedSecret[];
}

export function NotificationsPanel() {
  useWatch('notifications');
  const res = useConsole((s) => s.notifications);
  const { refresh } = useActions();
  // Kept here, above the form: a save that adds a webhook re-creates the form.
  const [shown, setShown] = useState<Shown | null>(null);
  if (!res.data) {
    if (res.error) return <ErrorBanner error={res.error} what="Could not load the notification settings" onRetry={() => void refresh('notifications')} />;
    return <Spinner label="Loading notification settings…" />;
  }
  return (
    <div className="notify-grid">
      <NotificationsForm key={res.data.settings.webhooks.map((w) => w.id).join(',')} view={res.data.settings} onSecrets={setShown} />
      <Deliveries recent={res.data.deliveries} dead={res.data.dead} webhooks={res.data.settings.webhooks} />
      {shown ? <SecretShownOnce shown={shown} onClose={() => setShown(null)} /> : null}
    </div>
  );
}

/** The whole secret, this once, with a Copy button. */
function SecretShownOnce({ shown, onClose }: { shown: Shown; onClose: () => void }) {
  const one = shown.secrets.length === 1;
  return (
    <Dialog title={shown.why === 'added' ? (one ? 'Webhook added: its signing secret' : 'Webhooks added: their signing secrets') : 'New signing secret'} onClose={onClose} wide testId="secret-dialog">
      <div className="form">
        <div className="callout callout-warn">
          <strong>Copy {one ? 'it' : 'each'} into your receiver now.</strong> Gaffer shows {one ? 'it' : 'them'} only this once; from now on you see only the last four characters. If you lose{' '}
          {one ? 'it' : 'one'}, make a new one with New secret.
        </div>
        {shown.secrets.map((s) => (
          <div key={s.webhookId} className="field">
            <span className="field-label">{s.label}</span>
            <CopyText text={s.secret} label={`the signing secret of ${s.label}`} testId="secret-value" autoFocus={s === shown.secrets[0]} />
          </div>
        ))}
        <p className="dialog-explain small">
          Every delivery {shown.why === 'rotated' ? 'from now on ' : ''}is signed with {one ? 'it' : 'its webhook’s secret'}: the <code>Gaffer-Signature</code> header, an HMAC-SHA256 of the time and the body. Your receiver
          recomputes it and refuses what does not match; <code>docs/protocol.md</code> has a five-line check in Python and in Node.
        </p>
        <div className="dialog-actions">
          <button type="button" className="btn btn-primary" onClick={onClose} data-testid="secret-done">
            Done, I copied it
          </button>
        </div>
      </div>
    </Dialog>
  );
}

/** "New secret": said before it happens (a receiver with the old one refuses deliveries until updated). */
function RotateDialog({ label, webhookId, onDone, onClose }: { label: string; webhookId: string; onDone: (secret: string) => void; onClose: () => void }) {
  const { rotateWebhookSecret } = useActions();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<UiError | null>(null);
  const go = async () => {
    setBusy(true);
    setError(null);
    try {
      const r = await rotateWebhookSecret(webhookId);
      onDone(r.secret);
    } catch (e) {
      setError(toUiError(e));
      setBusy(false);
    }
  };
  return (
    <Dialog title={`New signing secret for ${label}`} onClose={onClose} testId="rotate-dialog">
      <div className="form">
        <p className="dialog-explain">
          Gaffer makes a new secret and signs every delivery from now on with it; the old one stops working at once, so your receiver refuses deliveries until you paste the new secret into it. The
          new secret is shown once, on the next screen.
        </p>
        {error ? <ErrorBanner error={error} /> : null}
        <div className="dialog-actions">
          <button type="button" className="btn" onClick={onClose}>
            Back
          </button>
          <button type="button" className="btn btn-primary" disabled={busy} onClick={() => void go()} data-testid="rotate-confirm">
            {busy ? 'Working…' : 'Make a new secret'}
          </button>
        </div>
      </div>
    </Dialog>
  );
}

function NotificationsForm({ view, onSecrets }: { view: NotificationSettingsView; onSecrets: (s: Shown) => void }) {
  const { saveNotifications, testWebhooks } = useActions();
  const consoleId = useId();
  const [rotating, setRotating] = useState<{ id: string; label: string } | null>(null);
  const [draft, setDraft] = useState<NotificationsDraft>(() => draftFromView(view));
  const [busy, setBusy] = useState(false);
  const [tests, setTests] = useState<WebhookTestResult[] | null>(null);
  const [touched, setTouched] = useState(false);
  const problems = draftProblems(draft);
  const dirty = JSON.stringify(draftToInput(draft)) !== JSON.stringify(draftToInput(draftFromView(view)));
  const setHook = (i: number, patch: Partial<HookDraft>) => setDraft({ ...draft, webhooks: draft.webhooks.map((h, k) => (k === i ? { ...h, ...patch } : h)) });

  const save = async () => {
    setTouched(true);
    if (problems.length > 0) return;
    setBusy(true);
    try {
      const saved = await saveNotifications(draftToInput(draft), null);
      const secrets = revealedSecrets(saved);
      if (secrets.length > 0) onSecrets({ why: 'added', secrets });
    } catch {
      // The toast said why; the draft stays as typed.
    } finally {
      setBusy(false);
    }
  };
  const test = async (id: string | null) => {
    setBusy(true);
    try {
      setTests(await testWebhooks(id));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="panel" data-testid="notifications-form">
      <header className="panel-head">
        <h2>Webhooks</h2>
        <span className="muted">each new item of a chosen kind is POSTed; retried with backoff; URLs are stored as given and shown masked</span>
      </header>
      {draft.webhooks.length === 0 ? (
        <EmptyState title="No webhook yet" compact>
          Add one to reach your phone or a chat channel: plain JSON, a Slack incoming webhook, or an ntfy topic.
        </EmptyState>
      ) : null}
      {draft.webhooks.map((h, i) => (
        <HookEditor
          key={h.key}
          hook={h}
          savedSecret={view.webhooks.find((w) => w.id === h.id)?.secret ?? null}
          onRotate={h.id ? () => setRotating({ id: h.id!, label: h.name || h.maskedUrl || 'this webhook' }) : null}
          problems={touched ? problems.filter((p) => p.index === i).map((p) => p.message) : []}
          test={tests?.find((t) => t.webhookId === h.id) ?? null}
          busy={busy}
          onChange={(patch) => setHook(i, patch)}
          onRemove={() => setDraft({ ...draft, webhooks: draft.webhooks.filter((_, k) => k !== i) })}
          onTest={h.id && !dirty ? () => void test(h.id) : null}
        />
      ))}
      <div className="actions-row">
        <button className="btn" onClick={() => setDraft({ ...draft, webhooks: [...draft.webhooks, newHookDraft(`new-${Date.now()}`)] })} data-testid="webhook-add">
          Add a webhook
        </button>
        {view.webhooks.length > 0 ? (
          <button className="btn" disabled={busy || dirty} onClick={() => void test(null)} title={dirty ? 'Save first: the test uses the saved webhooks' : 'Send a test notice to every webhook now'} data-testid="webhook-test-all">
            Test all
          </button>
        ) : null}
      </div>

      <h3>Links in notifications</h3>
      <label className="field" htmlFor={consoleId}>
        <span className="field-label">Console address</span>
        <input
          id={consoleId}
          type="url"
          value={draft.consoleUrl}
          autoComplete="off"
          spellCheck={false}
          placeholder={draft.consoleUrlDefault || 'Gaffer’s own address'}
          onChange={(e) => setDraft({ ...draft, consoleUrl: e.target.value })}
          data-testid="console-url"
        />
        <span className="field-help">
          Each notification links to its item at this address, so tapping it on your phone opens the item. Leave it empty for Gaffer’s own address{draft.consoleUrlDefault ? ` (${draft.consoleUrlDefault})` : ''}; set it when you reach the
          console another way (a tunnel, a host name).
        </span>
      </label>

      <h3>Desktop notifications</h3>
      <p className="muted small">Shown by the desktop app for new items of these kinds (a browser console shows the count in the rail instead).</p>
      <KindPicker value={draft.desktopKinds} onChange={(desktopKinds) => setDraft({ ...draft, desktopKinds })} testId="desktop-kinds" />
      <label className="check-row quiet-row">
        <input type="checkbox" checked={draft.quiet} onChange={(e) => setDraft({ ...draft, quiet: e.target.checked })} data-testid="quiet-on" /> Quiet hours: no desktop notification from
        <input type="time" value={draft.quietStart} disabled={!draft.quiet} onChange={(e) => setDraft({ ...draft, quietStart: e.target.value })} aria-label="Quiet hours start" />
        to
        <input type="time" value={draft.quietEnd} disabled={!draft.quiet} onChange={(e) => setDraft({ ...draft, quietEnd: e.target.value })} aria-label="Quiet hours end" />
        <span className="muted small">(your local time; items still wait in the inbox)</span>
      </label>
      {touched ? problems.filter((p) => p.index === null).map((p) => <div key={p.message} className="field-error">{p.message}</div>) : null}
      <div className="dialog-actions">
        <button className="btn" disabled={!dirty || busy} onClick={() => setDraft(draftFromView(view))}>
          Discard changes
        </button>
        <button className="btn btn-primary" disabled={!dirty || busy} onClick={() => void save()} data-testid="notifications-save">
          {busy ? 'Working…' : 'Save'}
        </button>
      </div>
      {rotating ? (
        <RotateDialog
          label={rotating.label}
          webhookId={rotating.id}
          onClose={() => setRotating(null)}
          onDone={(secret) => {
            setRotating(null);
            onSecrets({ why: 'rotated', secrets: [{ webhookId: rotating.id, label: rotating.label, secret }] });
          }}
        />
      ) : null}
    </section>
  );
}

function HookEditor({
  hook,
  savedSecret,
  onRotate,
  problems,
  test,
  busy,
  onChange,
  onRemove,
  onTest,
}: {
  hook: HookDraft;
  /** The saved webhook's secret as the server shows it now (masked), null for a new one. */
  savedSecret: string | null;
  onRotate: (() => void) | null;
  problems: string[];
  test: WebhookTestResult | null;
  busy: boolean;
  onChange: (p: Partial<HookDraft>) => void;
  onRemove: () => void;
  onTest: (() => void) | null;
}) {
  const urlId = useId();
  const nameId = useId();
  const fmtId = useId();
  return (
    <div className="hook" data-testid={`webhook-${hook.id ?? 'new'}`}>
      <div className="field-row">
        <label className="field" htmlFor={nameId}>
          <span className="field-label">Name</span>
          <input id={nameId} value={hook.name} maxLength={100} placeholder="e.g. phone" onChange={(e) => onChange({ name: e.target.value })} />
        </label>
        <label className="field" htmlFor={fmtId}>
          <span className="field-label">Body</span>
          <select id={fmtId} value={hook.format} onChange={(e) => onChange({ format: e.target.value as WebhookFormat })}>
            {WEBHOOK_FORMATS.map((f) => (
              <option key={f} value={f}>
                {FORMAT_LABELS[f]}
              </option>
            ))}
          </select>
        </label>
        <label className="check">
          <input type="checkbox" checked={hook.enabled} onChange={(e) => onChange({ enabled: e.target.checked })} /> On
        </label>
      </div>
      <label className="field" htmlFor={urlId}>
        <span className="field-label">URL {hook.maskedUrl ? <span className="muted small mono">saved: {hook.maskedUrl}</span> : null}</span>
        <input id={urlId} value={hook.url} type="url" autoComplete="off" spellCheck={false} placeholder={hook.maskedUrl ? 'leave empty to keep the saved URL' : 'https://…'} onChange={(e) => onChange({ url: e.target.value })} data-testid="webhook-url" />
      </label>
      <div className="hook-secret small" data-testid="webhook-secret">
        <span className="field-label">Signing secret</span>{' '}
        {savedSecret && onRotate ? (
          <>
            <code className="mono">{savedSecret}</code>
            <button type="button" className="btn btn-small" onClick={onRotate} data-testid="webhook-rotate">
              New secret…
            </button>
          </>
        ) : (
          <span className="muted">made when you save; shown to you once, to copy into your receiver</span>
        )}
      </div>
      <KindPicker value={hook.events} onChange={(events) => onChange({ events })} />
      {problems.map((p) => (
        <div key={p} className="field-error">
          {p}
        </div>
      ))}
      <div className="actions-row">
        {onTest ? (
          <button className="btn btn-small" disabled={busy} onClick={onTest} data-testid="webhook-test">
            Test
          </button>
        ) : null}
        {test ? (
          <span className={test.ok ? 'text-ok small' : 'text-bad small'} data-testid="webhook-test-result">
            {test.ok ? `Delivered (HTTP ${test.status}, ${test.ms} ms)` : `Failed: ${test.error}`}
          </span>
        ) : null}
        <span className="spacer" />
        <button className="btn btn-small btn-danger-quiet" onClick={onRemove}>
          Remove
        </button>
      </div>
    </div>
  );
}

function KindPicker({ value, onChange, testId }: { value: InboxKind[]; onChange: (v: InboxKind[]) => void; testId?: string }) {
  const set = new Set(value);
  return (
    <fieldset className="kind-picker" data-testid={testId}>
      <legend className="field-label">Kinds</legend>
      {INBOX_KINDS.map((k) => (
        <label key={k} className="check">
          <input type="checkbox" checked={set.has(k)} onChange={() => onChange(INBOX_KINDS.filter((x) => (x === k ? !set.has(k) : set.has(x))))} />
          {kindLabel(k)}
        </label>
      ))}
    </fieldset>
  );
}

function Deliveries({ recent, dead, webhooks }: { recent: Delivery[]; dead: Delivery[]; webhooks: NotificationSettingsView['webhooks'] }) {
  const { retryDelivery } = useActions();
  const row = (d: Delivery) => {
    const words = deliveryWords(d, webhooks);
    return (
      <li key={d.id} className="delivery" data-testid="delivery">
        <Badge tone={d.status === 'delivered' ? 'done' : d.status === 'dead' ? 'failed' : 'blocked'}>{d.status === 'dead' ? 'gave up' : d.status}</Badge>
        <span className="delivery-what">
          {d.kind === 'test' ? null : <span className="muted small">{kindLabel(d.kind)}: </span>}
          {words.what}
        </span>
        <span className="muted small">
          to {words.to} · attempt {d.attempts} · <RelativeTime at={d.updatedAt} />
        </span>
        {d.lastError ? <span className="text-bad small">{d.lastError}</span> : null}
        {d.status === 'pending' && d.nextAt ? (
          <span className="muted small">
            next <RelativeTime at={d.nextAt} />
          </span>
        ) : null}
        {d.status === 'dead' ? (
          <button className="btn btn-small" onClick={() => void retryDelivery(d.id)}>
            Retry
          </button>
        ) : null}
      </li>
    );
  };
  return (
    <section className="panel" data-testid="deliveries">
      <header className="panel-head">
        <h2>Deliveries</h2>
        <span className="muted">every attempt is in the audit log</span>
      </header>
      {dead.length > 0 ? (
        <>
          <h3>Gave up ({dead.length})</h3>
          <ul className="plain-list">{dead.map(row)}</ul>
        </>
      ) : null}
      <h3>Latest</h3>
      {recent.length === 0 ? <p className="muted small">Nothing sent yet.</p> : <ul className="plain-list">{recent.map(row)}</ul>}
    </section>
  );
}
