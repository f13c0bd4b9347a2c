/**
 * The rehearsal's agents: a fake of the engine's hub port (`EngineHub` = hub/ports.ts `JobsHubPort`:
 * pick, send, connectedInstances, requestPrecheck, setRunSink) whose instances are played by the
 * scenario's script. The engine owns the offer (engine/offers.ts: who it is offered to, its ack
 * timeout, the next instance); a `job_trigger` it sends goes to a scripted instance instead of a
 * socket; the instance
 * answers through the engine's own run sink (`run_started`, `run_step`, `run_result`), exactly the
 * calls the real hub makes for a real agent. Nothing is sent to a real agent.
 *
 * Invariants:
 * 1. Instances are rows of the real instance registry of the throw-away database: hello, socket
 *    closed (disconnected), the reconnect grace running out (offline) and resumption are the
 *    registry's own transitions, so the engine hears of them through its usual events.
 * 2. Each scripted action happens at its own instant on the rehearsal clock. While Gaffer is down
 *    (or the instance's socket is closed) a live instance keeps working and keeps what it would
 *    send; it sends it, in order, once it has said hello again — as the SDK resends after a
 *    reconnect. What the engine refuses (`not_holder`, …) is told in the timeline.
 * 3. `pick` chooses the least loaded online instance of the role that the engine did not exclude
 *    (attempts it holds + the offers out to it the engine counts), or none, as the real hub does.
 * 4. An attempt the engine takes away (`run_cancelled`) is dropped by its agent: nothing more is
 *    sent for it, until the run is offered again.
 */
import type { SchedulerConfig } from '../../../common/config';
import type { AgentPush, AgentRequestOf, RunCancelReason } from '../../../common/protocol';
import type { EventBus } from '../../events';
import type { JobTrigger, PrecheckVerdict, RunSink } from '../../hub';
import type { InstanceRegistry } from '../../instances';
import type { EngineHub } from '../engine';
import type { SteppingClock } from './stepping-clock';

/** One thing the scripted agent does, `stepMs` after the previous one (a start `ackMs` after the offer). */
export type AgentAction =
  | { do: 'start' }
  | { do: 'step'; step: string }
  | { do: 'succeed' }
  | { do: 'fail'; errorClass: 'retryable' | 'fatal' | 'needs_human'; error: string }
  /** The agent's process dies: its socket closes and it says nothing more; a supervisor may start a new one. */
  | { do: 'vanish'; respawnAfterMs?: number }
  /** Gaffer goes down for `forMs` (the scenario's restart), the agent keeping on with its work. */
  | { do: 'restart_gaffer'; forMs: number };

/** The `job_trigger` as the scripted agent receives it (the engine's additions included). */
export type OfferedTrigger = JobTrigger & { trigger?: string; backfillId?: number; covers?: string[] };

/** What the scenario's agent does with one offer. */
export type AgentScript = (t: OfferedTrigger, agent: ScriptedInstance) => AgentAction[];

/** A remark for the timeline (kind `agent` or `gaffer`). */
export type Annotate = (kind: 'agent' | 'gaffer', detail: string, about?: { slot?: string; attempt?: number }) => void;

export interface ScriptedInstance {
  readonly name: string;
  readonly role: string;
  instanceId: string;
  /** The process runs (false once it vanished). */
  alive: boolean;
  /** Its socket is open (a restart of Gaffer closes it until it says hello again). */
  connected: boolean;
  /** Attempts it holds. */
  inFlight: number;
}

export interface ScriptedHubDeps {
  clock: SteppingClock;
  instances: InstanceRegistry;
  events: EventBus;
  config: SchedulerConfig;
  script: AgentScript;
  note: Annotate;
  /** How long one step of the agent's work takes, and how long it takes to accept an offer. */
  stepMs: number;
  ackMs: number;
  /** Gaffer's restart, asked for by the script (the sandbox stops and starts the engine). */
  restartGaffer: (forMs: number) => void;
}

/** From an offer to the agent's `run_started` (the default pace). */
export const ACK_MS = 1000;
/** How long after Gaffer is back an agent whose socket closed says hello again (the SDK's first reconnect). */
export const RECONNECT_MS = 2000;

interface Agent extends ScriptedInstance {
  outbox: Array<() => void>;
}

export class ScriptedHub implements EngineHub {
  private sink: RunSink | undefined;
  private readonly agents: Agent[] = [];
  private gafferUp = false;
  private sessions = 0;
  private ahead = 0;
  /** `runId instanceId` of attempts the engine took away (`run_cancelled`): their agent stops working on them. */
  private readonly cancelled = new Set<string>();

  constructor(private readonly deps: ScriptedHubDeps) {}

  // ---- the engine's port ---------------------------------------------------------------------

  setRunSink(sink: RunSink | undefined): void {
    this.sink = sink;
  }

  connectedInstances(role?: string): string[] {
    return this.online(role).map((a) => a.instanceId);
  }

  /** Every scripted agent takes job runs. */
  runTakers(role: string): string[] {
    return this.connectedInstances(role);
  }

  requestPrecheck(): Promise<PrecheckVerdict> {
    // Preconditions are scripted (scripted-checks.ts): no agent is asked.
    return Promise.resolve({ status: 'no_instance', ready: false, reason: 'prechecks are scripted in a rehearsal' });
  }

  pick(role: string, exclude: ReadonlySet<string>, offersOut?: (instanceId: string) => number): string | null {
    const load = (a: Agent) => a.inFlight + (offersOut?.(a.instanceId) ?? 0);
    const best = this.online(role)
      .filter((a) => !exclude.has(a.instanceId))
      .sort((a, b) => load(a) - load(b))[0];
    return best?.instanceId ?? null;
  }

  send(instanceId: string, push: AgentPush): boolean {
    const a = this.online().find((x) => x.instanceId === instanceId);
    if (!a) return false;
    if (push.type === 'job_trigger') this.deliver(a, push as OfferedTrigger);
    else if (push.type === 'run_cancelled') this.cancel(a, push.runId, push.reason as RunCancelReason);
    return true;
  }

  private cancel(a: Agent, runId: string, reason: RunCancelReason): void {
    this.cancelled.add(`${runId} ${a.instanceId}`);
    a.inFlight = Math.max(0, a.inFlight - 1);
    this.deps.note('agent', `${a.name} is told to stop the attempt (${reason}) and drops it`);
  }

  // ---- the scenario's side -------------------------------------------------------------------

  /** An agent process of `role` says hello (a new instance); while Gaffer is down it tries again shortly. */
  hello(role: string, name: string): void {
    if (!this.gafferUp) {
      this.later(RECONNECT_MS, () => this.hello(role, name));
      return;
    }
    const inst = this.deps.instances.register({ role, name, version: 'rehearsal' });
    const agent: Agent = { name, role, instanceId: inst.id, alive: true, connected: true, inFlight: 0, outbox: [] };
    this.agents.push(agent);
    this.announce(agent, false);
  }

  /** Gaffer's process stopped: every socket closed with it; offers in flight end with the hub. */
  gafferStopped(): void {
    this.gafferUp = false;
    for (const a of this.agents) a.connected = false;
  }

  /** Gaffer started (after `instances.disconnectAll`): live agents say hello again shortly. */
  gafferStarted(first: boolean): void {
    this.gafferUp = true;
    if (first) return;
    for (const a of this.agents) if (a.alive) this.later(RECONNECT_MS, () => this.reconnect(a));
    // What the core's start does: one watchdog sweep once the reconnect grace is over.
    this.later(this.deps.config.reconnectGraceS * 1000 + 1, () => this.expireGrace());
  }

  /** Scripted agent actions (and reconnects) still to happen. */
  get pending(): number {
    return this.ahead;
  }

  // ---- internals -----------------------------------------------------------------------------

  /** `fn` after `ms` on the rehearsal clock, counted in `pending` until it ran. */
  private later(ms: number, fn: () => void): void {
    this.ahead++;
    this.deps.clock.setTimeout(() => {
      this.ahead--;
      fn();
    }, ms);
  }

  private online(role?: string): Agent[] {
    if (!this.gafferUp) return [];
    return this.agents.filter((a) => a.alive && a.connected && (role === undefined || a.role === role));
  }

  private announce(a: Agent, resumed: boolean): void {
    this.deps.events.emit({ type: 'session.hello', sessionId: `rehearsal-${++this.sessions}`, instanceId: a.instanceId, role: a.role, resumed, takesRuns: true });
  }

  private deliver(a: Agent, t: OfferedTrigger): void {
    a.inFlight++;
    const attempt = `${t.runId} ${a.instanceId}`;
    this.cancelled.delete(attempt); // offered again: a new attempt
    const about = { slot: t.slot, attempt: t.attempt };
    const actions = this.deps.script(t, a);
    if (t.completedSteps.length) {
      this.deps.note('agent', `${a.name} is told ${t.completedSteps.map((s) => `“${s}”`).join(', ')} ${t.completedSteps.length === 1 ? 'is' : 'are'} done already: it skips ${t.completedSteps.length === 1 ? 'it' : 'them'}`, about);
    }
    let delay = 0;
    actions.forEach((act, i) => {
      delay += i === 0 ? this.deps.ackMs : this.deps.stepMs;
      this.later(delay, () => {
        if (!a.alive || this.cancelled.has(attempt)) return;
        const send = () => {
          if (act.do === 'start') this.start(a, t);
          else this.act(a, t, act, about);
        };
        // A restart and a vanishing are the agent's (or the machine's) doing, not messages.
        if (act.do === 'vanish' || act.do === 'restart_gaffer' || (a.connected && this.gafferUp)) send();
        else a.outbox.push(send);
      });
    });
    // Nobody acknowledging within the script (it never starts): the engine's ack timeout moves the offer on.
  }

  private start(a: Agent, t: OfferedTrigger): boolean {
    return this.call(a, t, () => this.sink?.runStarted(a.instanceId, { type: 'run_started', id: this.requestId(), runId: t.runId } as AgentRequestOf<'run_started'>), 'run_started');
  }

  private act(a: Agent, t: OfferedTrigger, act: AgentAction, about: { slot: string; attempt: number }): void {
    switch (act.do) {
      case 'start':
        return;
      case 'step':
        this.call(a, t, () => this.sink?.runStep(a.instanceId, { type: 'run_step', id: this.requestId(), runId: t.runId, step: act.step } as AgentRequestOf<'run_step'>), 'run_step');
        return;
      case 'succeed':
        a.inFlight--;
        this.call(a, t, () => this.sink?.runResult(a.instanceId, { type: 'run_result', id: this.requestId(), runId: t.runId, outcome: 'success' } as AgentRequestOf<'run_result'>), 'run_result');
        return;
      case 'fail':
        a.inFlight--;
        this.call(
          a,
          t,
          () => this.sink?.runResult(a.instanceId, { type: 'run_result', id: this.requestId(), runId: t.runId, outcome: 'failed', errorClass: act.errorClass, error: act.error } as AgentRequestOf<'run_result'>),
          'run_result',
        );
        return;
      case 'vanish':
        this.vanish(a, about, act.respawnAfterMs);
        return;
      case 'restart_gaffer':
        this.deps.restartGaffer(act.forMs);
        return;
    }
  }

  /** Sends one message to the engine's sink; a refusal is told in the timeline. True when accepted. */
  private call(a: Agent, t: OfferedTrigger, send: () => unknown, what: string): boolean {
    if (!this.sink) {
      this.deps.note('agent', `${a.name}'s ${what} found no Gaffer to answer it`, { slot: t.slot, attempt: t.attempt });
      return false;
    }
    try {
      send();
      return true;
    } catch (err) {
      const e = err as { code?: string; message?: string };
      this.deps.note('agent', `${a.name}'s ${what} was refused (${e.code ?? 'error'}): ${e.message ?? String(err)}`, { slot: t.slot, attempt: t.attempt });
      return false;
    }
  }

  private requestId(): string {
    return `r${++this.sessions}`;
  }

  private vanish(a: Agent, about: { slot: string; attempt: number }, respawnAfterMs: number | undefined): void {
    a.alive = false;
    a.connected = false;
    a.outbox = [];
    a.inFlight = 0;
    this.deps.note('agent', `${a.name}'s process dies: its socket closes and it sends nothing more`, about);
    this.deps.instances.disconnect(a.instanceId, 'its process died');
    this.deps.events.emit({ type: 'session.closed', sessionId: `rehearsal-${++this.sessions}`, instanceId: a.instanceId, code: 1006, reason: 'its process died' });
    // The hub's presence: the instance goes offline when the reconnect grace runs out (hub/presence.ts).
    this.later(this.deps.config.reconnectGraceS * 1000, () => this.expireGrace());
    if (respawnAfterMs !== undefined) this.later(respawnAfterMs, () => this.hello(a.role, `${a.name} (restarted)`));
  }

  /** A live agent whose socket closed says hello again: resumed within the grace, else a new instance. */
  private reconnect(a: Agent): void {
    if (!a.alive || a.connected || !this.gafferUp) return;
    const inst = this.deps.instances.register({ role: a.role, name: a.name, version: 'rehearsal', resume: a.instanceId });
    const resumed = inst.id === a.instanceId;
    if (!resumed) this.deps.note('agent', `${a.name} came back too late to resume: it is a new instance now`);
    a.instanceId = inst.id;
    a.connected = true;
    this.announce(a, resumed);
    const out = a.outbox;
    a.outbox = [];
    for (const send of out) send();
  }

  /** The watchdog's sweep: instances disconnected for longer than the reconnect grace go offline. */
  private expireGrace(): void {
    if (!this.gafferUp) return; // no watchdog while Gaffer is down; the next start sweeps
    const cutoff = this.deps.clock.now() - this.deps.config.reconnectGraceS * 1000;
    for (const id of this.deps.instances.disconnectedSince(cutoff, 100)) this.deps.instances.goOffline(id, 'disconnected');
  }
}
