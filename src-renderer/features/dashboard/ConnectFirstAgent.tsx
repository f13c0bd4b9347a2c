/**
 * The first-start card: nothing happens until an agent connects, so that comes first. Claude Code
 * and Codex become managed agents (Gaffer starts them and keeps them running), made from the same
 * recipe the token dialog prints (lib/agent-commands.ts); a script or an SDK agent gets a token
 * and the command to copy (the token dialog under Instances).
 */
import { useId, useState, type FormEvent } from 'react';
import { managedCwd } from '../../../src-main/common/managed-agents';
import { roleName } from '../../../src-main/common/schemas';
import { Dialog, DialogButtons } from '../../components/Dialog';
import { ErrorBanner } from '../../components/States';
import { CLI_AGENTS, cliAgentName, managedCliAgent, type CliAgent } from '../../lib/agent-commands';
import { toUiError, type UiError } from '../../lib/errors';
import { navigate } from '../../lib/navigation';
import { useActions } from '../../store/react';

const CLI_WORDS: Record<CliAgent, { program: string; needs: string }> = {
  claude: { program: 'claude -p', needs: 'Claude Code installed and signed in on this machine' },
  codex: { program: 'codex exec', needs: 'the Codex CLI installed and signed in on this machine' },
};

export function ConnectFirstAgent() {
  const [cli, setCli] = useState<CliAgent | null>(null);
  const token = () => navigate('instances', null, { connect: '1' });
  return (
    <section className="panel onboarding" data-testid="connect-agent">
      <header className="panel-head">
        <h2>Connect your first agent</h2>
      </header>
      <p className="small">
        Which agent do you have? Gaffer can start Claude Code or Codex for you and keep them running; for your own program or an agent written with the SDK it prints the command to
        run.
      </p>
      <div className="onboarding-choices">
        {(Object.keys(CLI_AGENTS) as CliAgent[]).map((c) => (
          <button key={c} className="btn btn-primary" onClick={() => setCli(c)} data-testid={`connect-${c}`}>
            {CLI_AGENTS[c].title}
          </button>
        ))}
        <button className="btn" onClick={token} data-testid="connect-script" title="Creates an agent token and prints the command that runs your program as an agent">
          A script
        </button>
        <button className="btn" onClick={token} data-testid="connect-agent-start" title="Creates an agent token and prints the commands for the TypeScript and Python SDKs">
          An SDK agent
        </button>
      </div>
      {cli ? <ConnectCliDialog cli={cli} onClose={() => setCli(null)} /> : null}
    </section>
  );
}

/** Asks for the role (and where to work), then defines the managed agent. */
function ConnectCliDialog({ cli, onClose }: { cli: CliAgent; onClose: () => void }) {
  const { createManagedAgent, toast } = useActions();
  const ids = { role: useId(), cwd: useId() };
  const [role, setRole] = useState('');
  const [cwd, setCwd] = useState('');
  const [submitted, setSubmitted] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<UiError | null>(null);
  const roleOk = roleName.safeParse(role.trim());
  const cwdOk = cwd.trim() === '' || managedCwd.safeParse(cwd.trim()).success;
  const words = CLI_WORDS[cli];
  const name = roleOk.success ? cliAgentName(cli, roleOk.data) : `<role>-${cli}`;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setSubmitted(true);
    if (!roleOk.success || !cwdOk) return;
    setBusy(true);
    setError(null);
    try {
      const a = await createManagedAgent(managedCliAgent(cli, roleOk.data, cwd.trim() || undefined), `connected from the first-start card (${CLI_AGENTS[cli].title})`);
      toast('success', `Created ${a.name}`, `Gaffer starts it and keeps it running; it takes tasks of the role ${a.role}.`);
      onClose();
      navigate('managed', a.name);
    } catch (err) {
      setError(toUiError(err));
      setBusy(false);
    }
  };

  return (
    <Dialog title={CLI_AGENTS[cli].title} onClose={onClose} testId="connect-cli-dialog">
      <form className="form" onSubmit={submit} noValidate>
        <p className="dialog-explain">
          Gaffer runs <code>{words.program}</code> for each task of the role, with the task on its input (never on its command line), and reads its conversation, tokens and cost.
          It needs {words.needs}.
        </p>
        <label className="field" htmlFor={ids.role}>
          <span className="field-label">Role</span>
          <input id={ids.role} name="role" value={role} onChange={(e) => setRole(e.target.value)} placeholder="dev" data-autofocus aria-invalid={submitted && !roleOk.success} />
          {submitted && !roleOk.success ? (
            <span className="field-error">{roleOk.error.issues[0]?.message ?? 'a role is required'}</span>
          ) : (
            <span className="field-help">
              It works the tasks and job runs of this role. Its instances are called <code>{name}-1</code>, ….
            </span>
          )}
        </label>
        <label className="field" htmlFor={ids.cwd}>
          <span className="field-label">Working directory (optional)</span>
          <input id={ids.cwd} name="cwd" className="mono" value={cwd} onChange={(e) => setCwd(e.target.value)} placeholder="/home/me/repo" aria-invalid={submitted && !cwdOk} />
          {submitted && !cwdOk ? <span className="field-error">An absolute path, e.g. /home/me/repo.</span> : <span className="field-help">The repository it works in; empty: Gaffer’s own directory.</span>}
        </label>
        {error ? <ErrorBanner error={error} /> : null}
        <DialogButtons onBack={onClose} label="Create and start" busy={busy} busyLabel="Creating…" testId="connect-cli-submit" />
      </form>
    </Dialog>
  );
}
