/**
 * Managed agents (PROTOCOL §7): definitions (definitions.ts) plus, once a shell attaches a process
 * spawner, the supervisor that runs them (supervisor.ts). `core.managed` is this service; the HTTP
 * API and the console call it with the operator as actor.
 *
 * Without `attach` (tests, a core without a server) definitions can be managed but nothing runs:
 * every agent reports `supervised: false` and no processes.
 */
import { createHash } from 'node:crypto';
import { GafferError } from '../../common/errors';
import type { Logger } from '../../common/logger';
import type { ManagedAction, ManagedAgent } from '../../common/managed-agents';
import type { TokenStore } from '../auth';
import type { CoreContext } from '../context';
import type { SecretBox } from '../secrets';
import { ManagedAgentStore, RESTART_FIELDS, type StoredManagedAgent } from './definitions';
import { Supervisor, type SupervisorOptions } from './supervisor';

export type { ProcessSpawner, LaunchRequest, LaunchedProcess, ProcessExit } from './ports';
export type { RecordedProcess } from './definitions';
export { DEFAULT_TIMING, type SupervisorTiming } from './supervisor';

/** The marker prefix of processes started for the Gaffer of this data directory. */
export function ownerKeyFor(dbPath: string): string {
  return createHash('sha256').update(dbPath).digest('hex').slice(0, 12);
}

export class ManagedAgents {
  readonly store: ManagedAgentStore;
  private supervisor: Supervisor | null = null;

  constructor(
    private readonly ctx: CoreContext,
    private readonly tokens: TokenStore,
    private readonly logger: Logger,
    secrets: SecretBox,
  ) {
    this.store = new ManagedAgentStore(ctx, secrets);
  }

  get supervised(): boolean {
    return this.supervisor !== null;
  }

  /** Starts supervising: reaps leftovers of an earlier Gaffer, then starts the agents. */
  async attach(opts: SupervisorOptions): Promise<void> {
    if (this.supervisor) throw new Error('managed agents are supervised already');
    this.supervisor = new Supervisor({ clock: this.ctx.clock, events: this.ctx.events, store: this.store, tokens: this.tokens, logger: this.logger }, opts);
    await this.supervisor.start();
  }

  /** Stops every managed process and waits for them to exit. */
  async detach(): Promise<void> {
    const s = this.supervisor;
    if (!s) return;
    await s.stop();
    this.supervisor = null;
  }

  private view(a: StoredManagedAgent, withOutput = false): ManagedAgent {
    return { ...a, supervised: this.supervised, processes: this.supervisor?.processes(a.id, withOutput) ?? [] };
  }

  list(): ManagedAgent[] {
    return this.store.list().map((a) => this.view(a));
  }

  get(ref: string): ManagedAgent {
    return this.view(this.store.get(ref), true);
  }

  create(input: unknown, opts: { actor: string }): ManagedAgent {
    const a = this.store.create(input, opts);
    this.supervisor?.created(a);
    return this.view(this.store.get(a.id));
  }

  update(ref: string, patch: unknown, opts: { actor: string }): ManagedAgent {
    const { agent, changed } = this.store.update(ref, patch, opts);
    if (changed.length > 0) this.supervisor?.updated(agent, changed.some((k) => (RESTART_FIELDS as readonly string[]).includes(k)));
    return this.view(this.store.get(agent.id));
  }

  remove(ref: string, opts: { actor: string; reason?: string }): ManagedAgent {
    const a = this.store.remove(ref, opts);
    this.supervisor?.deleted(a.id);
    return { ...a, supervised: this.supervised, processes: [] };
  }

  control(ref: string, action: ManagedAction, opts: { actor: string; reason?: string; instance?: number }): ManagedAgent {
    const current = this.store.get(ref);
    if (opts.instance !== undefined && action !== 'stop' && current.desired === 'stopped') {
      throw new GafferError('invalid_transition', `managed agent ${current.name} is stopped: start the agent, not one instance`);
    }
    const a = this.store.control(current.id, action, opts);
    this.supervisor?.control(a, action, opts.instance);
    return this.view(this.store.get(a.id));
  }
}
