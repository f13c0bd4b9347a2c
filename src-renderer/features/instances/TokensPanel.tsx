import { useMemo, useState } from 'react';
import type { TokenView } from '../../../src-main/common/console-api';
import { Badge } from '../../components/Badge';
import { CopyText } from '../../components/CopyText';
import { Dialog, ReasonDialog } from '../../components/Dialog';
import { EmptyState, ErrorBanner, Spinner } from '../../components/States';
import { Table, type Column } from '../../components/Table';
import { RelativeTime } from '../../components/Time';
import { agentCommands, agentUrl, PYTHON_AGENT_EXAMPLE } from '../../lib/agent-commands';
import { toUiError, type UiError } from '../../lib/errors';
import { useActions, useConsole } from '../../store/react';
import { validateTokenForm } from './logic';

/** `connect`: opened from "connect an agent" — the token form is open at once. */
export function TokensPanel({ connect = false }: { connect?: boolean }) {
  const res = useConsole((s) => s.tokens);
  const roles = useConsole((s) => s.roles.data);
  const { refresh } = useActions();
  const [creating, setCreating] = useState(connect);
  const [secret, setSecret] = useState<{ name: string; role: string | null; token: string } | null>(null);
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
              Create one: the next screen shows the command that starts an agent with it.
            </EmptyState>
          }
        />
      )}
      {creating ? (
        <CreateTokenDialog
          roles={(roles ?? []).map((r) => r.role)}
          onClose={() => setCreating(false)}
          onCreated={(name, role, token) => {
            setCreating(false);
            setSecret({ name, role, token });
          }}
        />
      ) : null}
      {secret ? <SecretDialog name={secret.name} role={secret.role} token={secret.token} onClose={() => setSecret(null)} /> : null}
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

function CreateTokenDialog({ roles, onClose, onCreated }: { roles: string[]; onClose: () => void; onCreated: (name: string, role: string | null, token: string) => void }) {
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
            onCreated(name.trim(), role.trim() || null, r.token);
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

function SecretDialog({ name, role, token, onClose }: { name: string; role: string | null; token: string; onClose: () => void }) {
  const port = useConsole((st) => st.settings.data?.port);
  const url = agentUrl(port, typeof window === 'undefined' ? null : window.location);
  const commands = agentCommands({ url, token, role: role ?? 'dev' });
  return (
    <Dialog title={`Token “${name}” created`} onClose={onClose} testId="dialog-token-secret" wide>
      <div className="form">
        <div className="callout callout-warn">
          <strong>Copy it now.</strong> This is the only time the secret is shown; Gaffer keeps only its hash. If you lose it, revoke this token and create another.
        </div>
        <CopyText text={token} label="the token" testId="token-secret" autoFocus />
        <h3>Start an agent with it</h3>
        <p className="small muted">
          Each command works as printed: it names this server ({url}), the whole secret and the role{role ? '' : ' (“dev” here: this token works for any role, so put the one the agent should work)'}.
        </p>
        <div className="agent-commands" data-testid="agent-commands">
          {commands.map((c) => (
            <section key={c.id} className="agent-command">
              <h3>{c.title}</h3>
              <p className="small muted">{c.about}</p>
              <CopyText text={c.text} label={`the ${c.title.toLowerCase()} command`} testId={`command-${c.id}`} />
              {c.id === 'python' ? (
                <details className="small">
                  <summary>your_agent.py</summary>
                  <CopyText text={PYTHON_AGENT_EXAMPLE} label="the Python agent" testId="python-example" />
                </details>
              ) : null}
            </section>
          ))}
        </div>
        <div className="dialog-actions">
          <button className="btn" onClick={onClose}>
            I have stored it
          </button>
        </div>
      </div>
    </Dialog>
  );
}
