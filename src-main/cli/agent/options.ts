/** `gaffer agent` options: parsing and the help text (every flag is documented here). */
import path from 'node:path';
import { MAX_RUN_TIMEOUT_S } from '../../common/managed-agents';
import { roleName } from '../../common/schemas';
import { cutText } from '../../common/line-splitter';
import { ADAPTERS } from './adapters';

export interface AgentCliOptions {
  url: string;
  role: string;
  name: string;
  cwd?: string;
  timeoutS?: number;
  shell: boolean;
  parse?: string;
  /** The model the CLI runs, for pricing its tokens when its output does not name it (Codex). */
  model?: string;
  graceS: number;
  killAfterS: number;
  pollS: number;
  maxTasks?: number;
  tasks: boolean;
  jobs: boolean;
  /** The agent's own log budget per attempt; unset: only Gaffer's caps apply. */
  maxLogLines?: number;
  maxLogBytes?: number;
  exitOnStdinClose: boolean;
  quiet: boolean;
  /** Also echo every log line of the attempts to the agent's own stderr. */
  verbose: boolean;
  /** PROTOCOL §15: a git worktree per attempt key (workspace.ts). */
  workspace?: { repo: string; base?: string; keep: 'always' | 'failed' | 'never'; onRetry: 'resume' | 'fresh'; sandbox: boolean; hide: string[] };
  command: string;
  args: string[];
}

export class UsageError extends Error {}

export const DEFAULT_URL = 'ws://127.0.0.1:7311/agent';

export function agentHelp(): string {
  const formats = Object.entries(ADAPTERS).map(([n, a]) => `                          ${n}: ${a.summary}`);
  return [
    'usage: gaffer agent --role ROLE [options] -- COMMAND [ARGS…]',
    '',
    'Claims tasks and acknowledges job triggers of ROLE, and runs COMMAND once for each (no shell',
    'unless --shell). The agent token comes from GAFFER_TOKEN (never from a flag); the command never',
    'sees it. Exit status 0 = done, 75 = retry later, 65 = fatal, 77 = needs a human, anything else =',
    'failed (see docs/command-agent.md for the environment, stdin, output file and ::gaffer:: lines).',
    '',
    'options:',
    `  --url URL             the agent socket (default $GAFFER_URL, else ${DEFAULT_URL})`,
    '  --role ROLE           the role to work for (required)',
    '  --name NAME           the instance name shown in the console (default ROLE-COMMAND-PID)',
    '  --cwd DIR             the command\'s working directory (default: the current one)',
    '  --timeout-s S         stop an attempt after S seconds: task failed, run retried by its policy',
    '  --shell               run COMMAND ARGS… as one shell command line (sh -c; cmd.exe on Windows)',
    '  --parse FORMAT        read the command\'s JSON output for readable log lines and usage:',
    ...formats,
    '  --model NAME          the model the CLI runs, to price its tokens when its output names none (Codex)',
    '  --grace-s S           on Ctrl-C / SIGTERM: let the running command finish for up to S seconds',
    '                        before it is stopped and its task handed back (default 30; twice: at once)',
    '  --kill-after-s S      SIGKILL the command\'s process group S seconds after SIGTERM (default 10)',
    '  --poll-s S            when there is nothing to claim, ask again after S seconds (default 5)',
    '  --max-tasks N         exit after N tasks',
    '  --no-tasks            do not claim tasks (job triggers only)',
    '  --no-jobs             do not take job triggers (tasks only)',
    '  --max-log-lines N     send at most N output lines per attempt to Gaffer (default: no limit of the',
    '                        agent\'s own; Gaffer caps each attempt\'s log itself, see Settings)',
    '  --max-log-bytes N     send at most N bytes of output per attempt (default: likewise)',
    '  --exit-on-stdin-close shut down at once when stdin closes (for supervisors: Gaffer\'s managed agents)',
    '  --quiet               log only warnings and errors of the agent itself',
    '  --verbose             also print every log line of the attempts here, on stderr (they always go to',
    '                        the task\'s or run\'s log in Gaffer)',
    '  --workspace REPO      run each attempt in its own git worktree of REPO, on branch gaffer/<key>',
    '                        (key: task-<id>, or <job>-<slot>); the main checkout is never touched',
    '  --base REF            the revision new branches start from (default: REPO\'s HEAD)',
    '  --on-retry MODE       resume (default): a retry finds the earlier attempt\'s tree as it was left;',
    '                        fresh: the branch and tree are reset to the base first',
    '  --keep WHEN           remove the worktree after an attempt: failed (default: keep it only when the',
    '                        attempt did not succeed), always (keep every one), never; branches always stay',
    '  --sandbox             (Linux, needs bwrap) the command sees its worktree read-write, a private /tmp,',
    '                        the rest read-only, and not Gaffer\'s data directory; the network stays open',
    '  --hide DIR            with --sandbox: also hide DIR from the command (Gaffer\'s default data directory',
    '                        and $GAFFER_DATA_DIR are always hidden); may be repeated',
    '  -h, --help            this text',
    '',
    'exit status: 0 after a shutdown or --max-tasks, 1 when the connection is refused or lost for good,',
    '2 on a usage error, 78 when COMMAND cannot be started (not found, not executable).',
  ].join('\n');
}

function number(flag: string, raw: string, opts: { min: number; max: number; integer?: boolean }): number {
  const n = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || !Number.isFinite(n) || n < opts.min || n > opts.max || (opts.integer && !Number.isInteger(n))) {
    throw new UsageError(`${flag} must be ${opts.integer ? 'an integer' : 'a number'} from ${opts.min} to ${opts.max}`);
  }
  return n;
}

const DAY_S = 86_400;

/** Parses `gaffer agent` arguments; throws UsageError with a one-line message. */
export function parseAgentArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): AgentCliOptions | 'help' {
  const sep = argv.indexOf('--');
  const own = sep < 0 ? argv : argv.slice(0, sep);
  const command = sep < 0 ? [] : argv.slice(sep + 1);
  const o: Partial<AgentCliOptions> & { tasks: boolean; jobs: boolean; repo?: string; base?: string; onRetry?: 'resume' | 'fresh'; keep?: 'always' | 'failed' | 'never'; sandbox?: boolean; hide?: string[] } = {
    tasks: true,
    jobs: true,
  };
  for (let i = 0; i < own.length; i++) {
    const arg = own[i]!;
    const eq = arg.indexOf('=');
    const flag = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    const inline = arg.startsWith('--') && eq > 0 ? arg.slice(eq + 1) : undefined;
    const value = (): string => {
      const v = inline ?? own[++i];
      if (v === undefined || (inline === undefined && v.startsWith('--'))) throw new UsageError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '-h':
      case '--help':
        return 'help';
      case '--url':
        o.url = value();
        break;
      case '--role':
        o.role = value();
        break;
      case '--name':
        o.name = value().trim();
        break;
      case '--cwd':
        o.cwd = path.resolve(value());
        break;
      case '--timeout-s':
        o.timeoutS = number(flag, value(), { min: 1, max: MAX_RUN_TIMEOUT_S });
        break;
      case '--shell':
        o.shell = true;
        break;
      case '--parse': {
        const f = value();
        if (!ADAPTERS[f]) throw new UsageError(`--parse: unknown format "${f}" (known: ${Object.keys(ADAPTERS).join(', ')})`);
        o.parse = f;
        break;
      }
      case '--model': {
        const m = value().trim();
        if (!m || m.length > 200) throw new UsageError('--model: a model id of 1–200 characters');
        o.model = m;
        break;
      }
      case '--grace-s':
        o.graceS = number(flag, value(), { min: 0, max: DAY_S });
        break;
      case '--kill-after-s':
        o.killAfterS = number(flag, value(), { min: 0, max: 3600 });
        break;
      case '--poll-s':
        o.pollS = number(flag, value(), { min: 0.05, max: 3600 });
        break;
      case '--max-tasks':
        o.maxTasks = number(flag, value(), { min: 1, max: Number.MAX_SAFE_INTEGER, integer: true });
        break;
      case '--no-tasks':
        o.tasks = false;
        break;
      case '--no-jobs':
        o.jobs = false;
        break;
      case '--max-log-lines':
        o.maxLogLines = number(flag, value(), { min: 1, max: 10_000_000, integer: true });
        break;
      case '--max-log-bytes':
        o.maxLogBytes = number(flag, value(), { min: 1024, max: 1024 ** 3, integer: true });
        break;
      case '--exit-on-stdin-close':
        o.exitOnStdinClose = true;
        break;
      case '--quiet':
        o.quiet = true;
        break;
      case '--verbose':
        o.verbose = true;
        break;
      case '--workspace':
        o.repo = path.resolve(value());
        break;
      case '--base':
        o.base = value();
        break;
      case '--on-retry': {
        const v = value();
        if (v !== 'resume' && v !== 'fresh') throw new UsageError('--on-retry must be resume or fresh');
        o.onRetry = v;
        break;
      }
      case '--keep': {
        const v = value();
        if (v !== 'always' && v !== 'failed' && v !== 'never') throw new UsageError('--keep must be always, failed or never');
        o.keep = v;
        break;
      }
      case '--sandbox':
        o.sandbox = true;
        break;
      case '--hide':
        (o.hide ??= []).push(path.resolve(value()));
        break;
      case '--token':
        throw new UsageError('the agent token is read from GAFFER_TOKEN, never from a flag (flags show up in process lists)');
      default:
        throw new UsageError(`unknown option ${flag} (gaffer agent --help lists them)`);
    }
  }
  if (!o.role) throw new UsageError('--role is required');
  if (!roleName.safeParse(o.role).success) throw new UsageError('--role must be 1–64 letters, digits, "_", "-" or "."');
  if (!o.tasks && !o.jobs) throw new UsageError('--no-tasks and --no-jobs together leave nothing to do');
  if (command.length === 0 || !command[0]) throw new UsageError('no command: put it after "--", e.g. gaffer agent --role dev -- ./work.sh');
  if (o.name !== undefined && (o.name.length === 0 || o.name.length > 200)) throw new UsageError('--name must be 1 to 200 characters');
  if (o.repo === undefined && (o.base !== undefined || o.onRetry !== undefined || o.keep !== undefined || o.sandbox || o.hide)) {
    throw new UsageError('--base, --on-retry, --keep, --sandbox and --hide need --workspace REPO');
  }
  if (o.hide && !o.sandbox) throw new UsageError('--hide needs --sandbox');
  if (o.repo !== undefined && o.cwd !== undefined) throw new UsageError('--cwd and --workspace exclude each other: with --workspace the command runs in its worktree');
  const [cmd, ...args] = command as [string, ...string[]];
  return {
    url: o.url ?? env.GAFFER_URL ?? DEFAULT_URL,
    role: o.role,
    name: o.name ?? `${o.role}-${cutText(path.basename(cmd), 40)}-${process.pid}`,
    ...(o.cwd !== undefined ? { cwd: o.cwd } : {}),
    ...(o.timeoutS !== undefined ? { timeoutS: o.timeoutS } : {}),
    shell: o.shell ?? false,
    ...(o.parse !== undefined ? { parse: o.parse } : {}),
    ...(o.model !== undefined ? { model: o.model } : {}),
    graceS: o.graceS ?? 30,
    killAfterS: o.killAfterS ?? 10,
    pollS: o.pollS ?? 5,
    ...(o.maxTasks !== undefined ? { maxTasks: o.maxTasks } : {}),
    tasks: o.tasks,
    jobs: o.jobs,
    ...(o.maxLogLines !== undefined ? { maxLogLines: o.maxLogLines } : {}),
    ...(o.maxLogBytes !== undefined ? { maxLogBytes: o.maxLogBytes } : {}),
    exitOnStdinClose: o.exitOnStdinClose ?? false,
    quiet: o.quiet ?? false,
    verbose: o.verbose ?? false,
    ...(o.repo !== undefined
      ? { workspace: { repo: o.repo, ...(o.base !== undefined ? { base: o.base } : {}), keep: o.keep ?? 'failed', onRetry: o.onRetry ?? 'resume', sandbox: o.sandbox ?? false, hide: o.hide ?? [] } }
      : {}),
    command: cmd,
    args,
  };
}
