import { useMemo, useState } from 'react';
import type { TokenView } from '../../../src-main/common/console-api';
import { Badge } from '../../components/Badge';
import { Dialog, ReasonDialog } from '../../components/Dialog';
import { EmptyState, ErrorBanner, Spinner } from '../../components/States';
import { Table, type Column } from '../../components/Table';
import { RelativeTime } from '../../components/Time';
import { toUiError, type UiError } from '../../lib/errors';
import { useActions, useConsole } from '../../store/react';
import { validateTokenForm } from './logic';

export function TokensPanel() {
  const res = useConsole((s) => s.tokens);
  const roles = useConsole((s) => s.roles.data);
  const { refresh } = useActions();
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<{ name: string; token: string } | null>(null);
  const [revoking, setRevoking] = useState<TokenView | null>(null);
  const [showRevoked, setShowRevoked] = useState(false);
  const { revokeToken } = useActions();
  const rows = useMemo(() => (res.data ?? []).filter((t) => showRevoked || !t.revokedAt).sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt)), [res.data, showRevoked]);
  const revokedCount = (res.data ?? []).filter((t) => t.revokedAt).length;

  const columns: Column<TokenView>[] = [
    { key: 'name', header: 'Name', width: 'minmax(160px, 2fr)', render: (t) => <strong>{t.name}</strong> },
    { key: 'role', header: 'Role', width: '120px', render: (t) => (t.role ? <Badge>{t.role}</Badge> : <span className="muted">any role</span>) },
    { key: 'id', header: 'Id', width: 'minmax(120px, 1fr)', showFrom: 860, render: (t) => <span className="mono small muted">{t.id}</span> },
    { key: 'created', header: 'Created', width: '120px', render: (t) => <RelativeTime at={t.createdAt} granularityMs={60_000} /> },
    {
      key: 'state',
      header: 'State',
      width: '150px',
      render: (t) =>
        t.revokedAt ? (
          <Badge tone="cancelled">
            revoked <RelativeTime at={t.revokedAt} granularityMs={60_000} />
          </Badge>
        ) : (
          <Badge tone="online">active</Badge>
        ),
    },
    {
      key: 'act',
      header: <span className="visually-hidden">Actions</span>,
      width: '90px',
      align: 'right',
      render: (t) =>
        t.revokedAt ? null : (
          <button className="btn btn-small btn-danger-quiet" onClick={() => setRevoking(t)} data-testid={`revoke-${t.id}`}>
            Revoke
          </button>
        ),
    },
  ];

  return (
    <section className="panel" data-testid="tokens-panel">
      <header className="panel-head">
        <h2>Agent tokens</h2>
        <span className="muted small">Each agent authenticates with its own token; a token may be bound to one role.</span>
        <span className="spacer" />
        {revokedCount > 0 ? (
          <label className="check">
            <input type="checkbox" checked={showRevoked} onChange={(e) => setShowRevoked(e.target.checked)} /> show {revokedCount} revoked
          </label>
        ) : null}
        <button className="btn btn-primary" onClick={() => setCreating(true)} data-testid="create-token">
          + New token
        </button>
      </header>
      {res.error ? <ErrorBanner error={res.error} what={res.data ? 'Could not refresh tokens (showing the last data)' : 'Could not load tokens'} onRetry={() => void refresh('tokens')} /> : null}
      {!res.data ? (
        res.error ? null : <Spinner label="Loading tokens…" />
      ) : (
        <Table
          columns={columns}
          rows={rows}
          rowKey={(t) => t.id}
          testId="tokens-table"
          ariaLabel="Agent tokens"
          rowTone={(t) => (t.revokedAt ? 'dim' : undefined)}
          empty={
            <EmptyState title="No agent tokens" compact>
              Create one, then start an agent with it: <code>GAFFER_TOKEN=… npx tsx examples/worker-agent.ts</code>.
            </EmptyState>
          }
        />
      )}
      {creating ? (
        <CreateTokenDialog
          roles={(roles ?? []).map((r) => r.role)}
          onClose={() => setCreating(false)}
          onCreated={(name, token) => {
            setCreating(false);
            setSecret({ name, token });
          }}
        />
      ) : null}
      {secret ? <SecretDialog name={secret.name} token={secret.token} onClose={() => setSecret(null)} /> : null}
      {revoking ? (
        <ReasonDialog
          title={`Revoke token “${revoking.name}”`}
          explain="Agents using this token are refused from now on; connected ones are not cut off mid-task but cannot reconnect."
          confirmLabel="Revoke token"
          danger
          testId="dialog-revoke-token"
          onConfirm={(reason) => revokeToken(revoking.id, reason)}
          onClose={() => setRevoking(null)}
        />
      ) : null}
    </section>
  );
}

function CreateTokenDialog({ roles, onClose, onCreated }: { roles: string[]; onClose: () => void; onCreated: (name: string, token: string) => void }) {
  const { createToken } = useActions();
  const [name, setName] = useState('');
  const [role, setRole] = useState('');
  const [submitted, setSubmitted] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<UiError | null>(null);
  const errs = validateTokenForm(name, role);
  return (
    <Dialog title="Create an agent token" onClose={onClose} testId="dialog-create-token">
      <form
        className="form"
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          setSubmitted(true);
          if (errs.name || errs.role) return;
          setBusy(true);
          try {
            const r = await createToken(name.trim(), role.trim() || null);
            onCreated(name.trim(), r.token);
          } catch (err) {
            setError(toUiError(err));
            setBusy(false);
          }
        }}
      >
        <label className="field">
          <span className="field-label">Name</span>
          <input name="name" value={name} onChange={(e) => setName(e.target.value)} data-autofocus placeholder="dev worker 1" aria-invalid={submitted && !!errs.name} />
          {submitted && errs.name ? <span className="field-error">{errs.name}</span> : <span className="field-help">who uses it, so you can revoke the right one later</span>}
        </label>
        <label className="field">
          <span className="field-label">Role (optional)</span>
          <input name="role" value={role} onChange={(e) => setRole(e.target.value)} list="token-roles" placeholder="any role" aria-invalid={submitted && !!errs.role} />
          <datalist id="token-roles">
            {roles.map((r) => (
              <option key={r} value={r} />
            ))}
          </datalist>
          {submitted && errs.role ? <span className="field-error">{errs.role}</span> : <span className="field-help">bind the token to one role; empty allows any</span>}
        </label>
        {error ? <ErrorBanner error={error} /> : null}
        <div className="dialog-actions">
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="btn btn-primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create token'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function SecretDialog({ name, token, onClose }: { name: string; token: string; onClose: () => void }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  return (
    <Dialog title={`Token “${name}” created`} onClose={onClose} testId="dialog-token-secret">
      <div className="form">
        <div className="callout callout-warn">
          <strong>Copy it now.</strong> This is the only time the secret is shown; Gaffer keeps only its hash. If you lose it, revoke this token and create another.
        </div>
        <div className="secret-row">
          <code className="secret" data-testid="token-secret" onFocus={(e) => window.getSelection()?.selectAllChildren(e.currentTarget)} tabIndex={0}>
            {token}
          </code>
          <button
            className="btn btn-primary"
            data-autofocus
            onClick={() => {
              if (!navigator.clipboard) {
                setCopied('failed');
                return;
              }
              navigator.clipboard.writeText(token).then(
                () => setCopied('yes'),
                () => setCopied('failed'),
              );
            }}
          >
            {copied === 'yes' ? 'Copied ✓' : 'Copy'}
          </button>
        </div>
        {copied === 'failed' ? <div className="field-error">The clipboard is not available here: select the text and copy it by hand.</div> : null}
        <p className="small muted">
          Start an agent with it: <code>GAFFER_TOKEN={token.slice(0, 8)}… npx tsx examples/worker-agent.ts</code>
        </p>
        <div className="dialog-actions">
          <button className="btn" onClick={onClose}>
            I have stored it
          </button>
        </div>
      </div>
    </Dialog>
  );
}
