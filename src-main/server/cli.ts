/**
 * Command-line options shared by `npm start` (headless) and the Electron shell (PROTOCOL §3).
 * Lives in `server/` so both shells can import it (the Electron shell may not import headless).
 * Scheduler timings are settings that can also be given here, so tests run them in seconds.
 */
import path from 'node:path';
import os from 'node:os';
import { z } from 'zod';
import { DEFAULT_CONFIG, type SchedulerConfig } from '../common/config';

export interface CliOptions {
  headless: boolean;
  host: string;
  port: number;
  dataDir: string;
  operatorToken: string | undefined;
  config: Partial<SchedulerConfig>;
  open: boolean;
  /** Desktop app: keep the secrets key in the data directory's 0600 file even where an OS keychain is there (core/secrets/keys.ts). */
  secretsKeyFile: boolean;
}

const seconds = z.coerce.number().positive().max(10 * 365 * 86400);
const MIN_HEARTBEAT_INTERVAL_MS = 100;
const FLAGS: Record<string, [keyof SchedulerConfig, z.ZodType<number>]> = {
  '--lock-window-s': ['lockWindowS', seconds],
  '--heartbeat-timeout-s': ['heartbeatTimeoutS', seconds],
  '--sweep-interval-s': ['sweepIntervalS', seconds],
  '--idempotency-window-s': ['idempotencyWindowS', seconds],
  '--reconnect-grace-s': ['reconnectGraceS', z.coerce.number().min(0).max(3600)],
  '--trigger-ack-timeout-s': ['triggerAckTimeoutS', seconds],
  '--heartbeat-interval-ms': ['heartbeatIntervalMs', z.coerce.number().int().min(MIN_HEARTBEAT_INTERVAL_MS).max(3_600_000)],
  '--agent-nice': ['agentNice', z.coerce.number().int().min(0).max(19)],
};
/** A flag whose value is not "a positive number" says what it takes instead. */
const FLAG_RULES: Record<string, string> = { '--agent-nice': 'a whole number from 0 to 19' };

export function defaultDataDir(): string {
  if (process.env.GAFFER_DATA_DIR) return path.resolve(process.env.GAFFER_DATA_DIR);
  const base =
    process.platform === 'win32'
      ? (process.env.APPDATA ?? path.join(os.homedir(), 'AppData', 'Roaming'))
      : process.platform === 'darwin'
        ? path.join(os.homedir(), 'Library', 'Application Support')
        : (process.env.XDG_DATA_HOME ?? path.join(os.homedir(), '.local', 'share'));
  return path.join(base, 'gaffer');
}

export function usage(): string {
  return [
    'gaffer [--headless] [--port 7311] [--host 127.0.0.1] [--data-dir DIR] [--no-open] [--secrets-key-file]',
    '       [--lock-window-s 7200] [--heartbeat-timeout-s 120] [--sweep-interval-s 60] [--idempotency-window-s 300]',
    '       [--reconnect-grace-s 10] [--trigger-ack-timeout-s 30] [--heartbeat-interval-ms 20000] [--agent-nice 10]',
    'env: GAFFER_OPERATOR_TOKEN or GAFFER_OPERATOR_TOKEN_FD (a pipe; else one is generated and printed), GAFFER_DATA_DIR',
    '--secrets-key-file: desktop app: keep the key of stored secrets in DATA_DIR/secrets.key, not the OS keychain',
    '--agent-nice: the CPU priority (nice, 0-19) of the agents Gaffer starts and their commands; 0 = as Gaffer',
  ].join('\n');
}

/** Parses argv; throws an Error with a one-line message on bad input. */
export function parseCli(argv: string[], env: NodeJS.ProcessEnv = process.env): CliOptions {
  const out: CliOptions = {
    headless: false,
    host: '127.0.0.1',
    port: 7311,
    dataDir: defaultDataDir(),
    operatorToken: env.GAFFER_OPERATOR_TOKEN || undefined,
    config: {},
    open: true,
    secretsKeyFile: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split('=', 2) as [string, string | undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === '--headless') out.headless = true;
    else if (flag === '--no-open') out.open = false;
    else if (flag === '--secrets-key-file') out.secretsKeyFile = true;
    else if (flag === '--port') {
      const p = z.coerce.number().int().min(0).max(65535).safeParse(value());
      if (!p.success) throw new Error('--port must be a number from 0 to 65535');
      out.port = p.data;
    } else if (flag === '--host') out.host = value();
    else if (flag === '--data-dir') out.dataDir = path.resolve(value());
    else if (flag in FLAGS) {
      const [key, schema] = FLAGS[flag]!;
      const r = schema.safeParse(value());
      if (!r.success) throw new Error(`${flag} must be ${FLAG_RULES[flag] ?? 'a positive number'}`);
      out.config[key] = r.data;
    } else if (flag === '--help' || flag === '-h') throw new Error(usage());
    else throw new Error(`unknown option ${flag}\n${usage()}`);
  }
  settleHeartbeatInterval(out.config);
  return out;
}

/**
 * The hub pings a session silent for one heartbeat interval, on a timer of that interval, so an
 * agent that relies on answering pings (most WebSocket libraries do it by themselves) is heard at
 * least every two intervals. A heartbeat timeout that is not longer than that would take such an
 * agent offline while it is alive: without `--heartbeat-interval-ms` the interval follows the
 * timeout (a third of it); with both given, the pair is refused.
 */
function settleHeartbeatInterval(config: Partial<SchedulerConfig>): void {
  const timeoutMs = (config.heartbeatTimeoutS ?? DEFAULT_CONFIG.heartbeatTimeoutS) * 1000;
  const interval = config.heartbeatIntervalMs ?? DEFAULT_CONFIG.heartbeatIntervalMs;
  if (timeoutMs > 2 * interval) return;
  if (config.heartbeatIntervalMs === undefined) {
    const derived = Math.floor(timeoutMs / 3);
    if (derived < MIN_HEARTBEAT_INTERVAL_MS) throw new Error(`--heartbeat-timeout-s must be at least ${(3 * MIN_HEARTBEAT_INTERVAL_MS) / 1000}`);
    config.heartbeatIntervalMs = derived;
    return;
  }
  throw new Error(
    `--heartbeat-timeout-s (${timeoutMs / 1000}) must be more than twice the heartbeat interval (${interval} ms): ` +
      'an agent that only answers pings would be taken offline while alive',
  );
}

/** Flags that take a value (`--port 7311` or `--port=7311`). */
const VALUE_FLAGS = new Set(['--port', '--host', '--data-dir', ...Object.keys(FLAGS)]);
const BARE_FLAGS = new Set(['--headless', '--no-open', '--secrets-key-file', '--help', '-h']);

/**
 * Splits argv into Gaffer's own options and everything else. Electron's `process.argv` also
 * carries Chromium/Electron switches and the app path (`electron . --port 7312`,
 * `--remote-debugging-port=0` from test drivers), which `parseCli` would refuse as unknown.
 */
export function splitKnownArgs(argv: readonly string[]): { known: string[]; other: string[] } {
  const known: string[] = [];
  const other: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const flag = arg.split('=', 1)[0]!;
    if (BARE_FLAGS.has(flag)) known.push(arg);
    else if (VALUE_FLAGS.has(flag)) {
      known.push(arg);
      if (!arg.includes('=') && i + 1 < argv.length) known.push(argv[++i]!);
    } else other.push(arg);
  }
  return { known, other };
}
