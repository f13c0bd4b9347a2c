/**
 * The supervisor: keeps each managed agent's processes running while Gaffer runs.
 *
 * Invariants:
 * 1. Each managed agent has `instances` slots; a slot has at most one current process, at most one
 *    replacement being started, and any number of old processes draining.
 * 2. An exit nobody asked for is followed by a restart after a backoff: 1 s, doubling with each
 *    quick exit in a row (one within `quickExitMs` of its start), capped at `maxBackoffMs`. After
 *    `crashLoopAfter` quick exits in a row the slot is "crash looping" and retried only every
 *    `crashLoopDelayMs`. A process that ran `quickExitMs` resets the count.
 * 3. A command that cannot be started (the launch failed, or the agent/shim exited 78) is not
 *    restarted: the slot is `failed` with the reason until the operator starts, restarts or changes it.
 * 4. Rolling replacement: when what runs changes (command, role, mode, cwd, env, options) or on
 *    restart, a new process is started next to the old one; once it is up (its instance said
 *    hello, or it kept running `quickExitMs`) the old one is drained (SIGTERM: it stops taking work,
 *    finishes or hands back what it has). A replacement that fails leaves the old one running.
 *    A change of `instances` alone only adds or drains slots.
 * 5. Every process is recorded in the ledger (pgid, start fingerprint, marker) when started and
 *    forgotten once it has exited and what it left behind (its marker) has been reaped; `stop`
 *    returns only once those reaps are done too, and `attach` first reaps what a previous Gaffer
 *    left (kill -9), so no managed process outlives Gaffer.
 * 6. Tokens: each agent gets a fresh role-bound token when supervision starts (the previous one,
 *    if any, is revoked); a role change mints a new one. A token is revoked once no process of
 *    its agent uses it any more. Secrets live only in memory.
 * 7. Time is the injected Clock: backoff, up and stable timers are clock timers.
 */
import type { Clock, TimerHandle } from '../../common/clock';
import { cutText } from '../../common/line-splitter';
import type { Logger } from '../../common/logger';
import {
  drainGraceS,
  type ManagedExit,
  type ManagedProcess,
  type ManagedProcessStatus,
  type OutputLine,
} from '../../common/managed-agents';
import type { TokenStore } from '../auth';
import type { EventBus } from '../events';
import { definitionOf, type ManagedAgentStore, type StoredManagedAgent } from './definitions';
import { EXIT_CANNOT_START, type LaunchedProcess, type ProcessExit, type ProcessSpawner } from './ports';

export interface SupervisorTiming {
  firstBackoffMs: number;
  maxBackoffMs: number;
  quickExitMs: number;
  crashLoopAfter: number;
  crashLoopDelayMs: number;
  /** SIGTERM → SIGKILL when Gaffer stops (the lifeline is closed too: agents stop at once). */
  shutdownKillAfterMs: number;
  /** Output lines kept per instance. */
  outputLines: number;
}

export const DEFAULT_TIMING: SupervisorTiming = {
  firstBackoffMs: 1000,
  maxBackoffMs: 60_000,
  quickExitMs: 10_000,
  crashLoopAfter: 5,
  crashLoopDelayMs: 5 * 60_000,
  shutdownKillAfterMs: 15_000,
  outputLines: 200,
};

export interface SupervisorOptions {
  spawner: ProcessSpawner;
  agentUrl: string;
  /** Prefix of every marker this Gaffer (this data directory) hands out. */
  ownerKey: string;
  timing?: Partial<SupervisorTiming>;
}

interface Proc {
  seq: number;
  slot: Slot;
  runVersion: number;
  version: number;
  tokenId: string;
  marker: string;
  name: string;
  handle: LaunchedProcess;
  startedAt: number;
  instanceId: string | null;
  up: boolean;
  stopping: boolean;
  exited: boolean;
  timer: TimerHandle | null;
  exit: Promise<void>;
  resolveExit: () => void;
}

interface Slot {
  instance: number;
  rt: Runtime;
  current: Proc | null;
  replacement: Proc | null;
  draining: Set<Proc>;
  /** Stopped by the operator (this instance only; until started again or Gaffer restarts). */
  held: boolean;
  failed: string | null;
  /** A restart of this slot was asked for: replace the current process once. */
  replace: boolean;
  restarts: number;
  quickExits: number;
  crashLooping: boolean;
  lastExit: ManagedExit | null;
  retry: TimerHandle | null;
  nextStartAt: number | null;
  output: OutputLine[];
}

interface Runtime {
  agent: StoredManagedAgent;
  /** The definition version whose command etc. processes should run (bumped on restart fields only). */
  runVersion: number;
  token: { id: string; secret: string; role: string } | null;
  slots: Map<number, Slot>;
  deleted: boolean;
}

const ACTOR = 'gaffer:supervisor';

export function describeExit(exit: ProcessExit, uptimeMs: number): string {
  if (exit.error) return `could not start: ${exit.error}`;
  const after = uptimeMs < 1000 ? `${uptimeMs} ms` : `${Math.round(uptimeMs / 1000)} s`;
  if (exit.code === EXIT_CANNOT_START) return `exit ${EXIT_CANNOT_START} after ${after}: the command cannot be started (see its output)`;
  return exit.code !== null ? `exit ${exit.code} after ${after}` : `killed by ${exit.signal ?? 'a signal'} after ${after}`;
}

export class Supervisor {
  private readonly timing: SupervisorTiming;
  private readonly runtimes = new Map<string, Runtime>();
  private seq = 0;
  private stopped = false;
  /** Reaps of what exited processes left behind, still under way. */
  private readonly reaping = new Set<Promise<void>>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly deps: { clock: Clock; events: EventBus; store: ManagedAgentStore; tokens: TokenStore; logger: Logger },
    private readonly opts: SupervisorOptions,
  ) {
    this.timing = { ...DEFAULT_TIMING, ...opts.timing };
    const sub = deps.events.on('instance.changed', (e) => this.onInstance(e.instance.id, e.instance.name, e.instance.tokenId, e.instance.status));
    this.unsubscribe = () => sub.dispose();
  }

  /** Reaps what an earlier Gaffer left, then starts every agent the operator wants running. */
  async start(): Promise<void> {
    const { store } = this.deps;
    const records = store.recordedProcesses();
    const reaped = await this.opts.spawner.reapLeftovers(records, `${this.opts.ownerKey}/`);
    for (const r of records) store.forgetProcess(r.pgid);
    if (reaped > 0) this.deps.logger.warn(`managed agents: ended ${reaped} process(es) left running by an earlier Gaffer`);
    for (const agent of store.list()) {
      if (agent.tokenId) this.revokeToken(agent.tokenId, 'Gaffer restarted: a new token is minted for the managed agent');
      store.setToken(agent.id, null);
      const rt: Runtime = { agent: { ...agent, tokenId: null }, runVersion: agent.version, token: null, slots: new Map(), deleted: false };
      this.runtimes.set(agent.id, rt);
      this.reconcile(rt);
    }
  }

  /** Stops every process (lifeline closed, SIGTERM, SIGKILL later) and waits for them to exit. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe();
    const exits: Array<Promise<void>> = [];
    for (const rt of this.runtimes.values()) {
      for (const slot of rt.slots.values()) {
        this.cancelRetry(slot);
        for (const p of this.procsOf(slot)) {
          this.stopProc(p, this.timing.shutdownKillAfterMs, true);
          exits.push(p.exit);
        }
      }
    }
    await Promise.all(exits);
    await Promise.all([...this.reaping]);
    for (const rt of this.runtimes.values()) {
      if (rt.token) this.revokeToken(rt.token.id, 'Gaffer stopped');
      if (!rt.deleted) this.deps.store.setToken(rt.agent.id, null);
    }
  }

  // ---- what the service tells us ----

  created(agent: StoredManagedAgent): void {
    const rt: Runtime = { agent, runVersion: agent.version, token: null, slots: new Map(), deleted: false };
    this.runtimes.set(agent.id, rt);
    this.reconcile(rt);
  }

  updated(agent: StoredManagedAgent, restartNeeded: boolean): void {
    const rt = this.runtimes.get(agent.id);
    if (!rt) return this.created(agent);
    rt.agent = { ...agent, tokenId: rt.agent.tokenId };
    if (restartNeeded) rt.runVersion = agent.version;
    for (const slot of rt.slots.values()) {
      slot.failed = null; // a changed definition gets a fresh try
      // … at once: a slot waiting out its backoff or crash-loop delay (five minutes) starts the
      // new definition now, with its count reset, instead of after the wait the old one earned.
      if (restartNeeded && slot.retry && !slot.current) {
        this.cancelRetry(slot);
        slot.crashLooping = false;
        slot.quickExits = 0;
      }
    }
    this.reconcile(rt);
  }

  deleted(id: string): void {
    const rt = this.runtimes.get(id);
    if (!rt) return;
    // Kept until its processes have exited, so `stop` still waits for them.
    rt.deleted = true;
    for (const slot of rt.slots.values()) {
      this.cancelRetry(slot);
      for (const p of this.procsOf(slot)) this.stopProc(p, this.drainKillAfterMs(rt), false);
    }
    if (rt.token && this.procsUsing(rt, rt.token.id) === 0) this.revokeToken(rt.token.id, 'managed agent deleted');
    this.forgetIfDone(rt);
  }

  control(agent: StoredManagedAgent, action: 'start' | 'stop' | 'restart', instance?: number): void {
    const rt = this.runtimes.get(agent.id);
    if (!rt) return;
    rt.agent = { ...agent, tokenId: rt.agent.tokenId };
    const slots = instance === undefined ? [...rt.slots.values()] : [this.slot(rt, instance)];
    for (const slot of slots) {
      if (action === 'stop') {
        if (instance !== undefined) slot.held = true;
        continue;
      }
      slot.held = false;
      slot.failed = null;
      slot.crashLooping = false;
      slot.quickExits = 0;
      this.cancelRetry(slot);
      if (action === 'restart') slot.replace = true;
    }
    this.reconcile(rt);
  }

  // ---- views ----

  processes(id: string, withOutput: boolean): ManagedProcess[] {
    const rt = this.runtimes.get(id);
    if (!rt || rt.deleted) return [];
    const out: ManagedProcess[] = [];
    for (const slot of [...rt.slots.values()].sort((a, b) => a.instance - b.instance)) {
      const main = slot.current ?? slot.replacement;
      const view = this.slotView(slot, main);
      if (withOutput) view.recentOutput = slot.output.slice(-50);
      out.push(view);
      for (const p of slot.draining) out.push({ ...this.procView(slot, p, 'draining'), message: 'replaced: finishing or handing back its work' });
    }
    return out;
  }

  // ---- reconciliation ----

  private reconcile(rt: Runtime): void {
    if (this.stopped || rt.deleted) return;
    const { agent } = rt;
    const wanted = agent.desired === 'running';
    if (wanted) this.ensureToken(rt);
    for (let i = 1; i <= agent.instances; i++) if (!rt.slots.has(i)) rt.slots.set(i, this.newSlot(rt, i));
    for (const slot of rt.slots.values()) {
      const retired = slot.instance > agent.instances;
      if (!wanted || retired || slot.held) {
        this.cancelRetry(slot);
        for (const p of this.procsOf(slot)) if (!p.stopping) this.stopProc(p, this.drainKillAfterMs(rt), false);
        if (retired && this.procsOf(slot).length === 0) rt.slots.delete(slot.instance);
        continue;
      }
      if (slot.failed || slot.retry) continue;
      const stale = (p: Proc | null) => !!p && (p.runVersion !== rt.runVersion || p.tokenId !== rt.token?.id);
      if (!slot.current && !slot.replacement) {
        slot.replace = false;
        this.launch(slot, 'current');
      } else if (slot.current && (stale(slot.current) || slot.replace) && (!slot.replacement || stale(slot.replacement))) {
        slot.replace = false;
        if (slot.replacement) this.stopProc(slot.replacement, this.drainKillAfterMs(rt), false);
        this.launch(slot, 'replacement');
      }
    }
    this.changed(agent.id, 'reconciled');
  }

  private newSlot(rt: Runtime, instance: number): Slot {
    return { instance, rt, current: null, replacement: null, draining: new Set(), held: false, failed: null, replace: false, restarts: 0, quickExits: 0, crashLooping: false, lastExit: null, retry: null, nextStartAt: null, output: [] };
  }

  private slot(rt: Runtime, instance: number): Slot {
    let s = rt.slots.get(instance);
    if (!s) rt.slots.set(instance, (s = this.newSlot(rt, instance)));
    return s;
  }

  private ensureToken(rt: Runtime): void {
    if (rt.token && rt.token.role === rt.agent.role) return;
    const old = rt.token;
    const { id, token } = this.deps.tokens.create({ name: `managed agent ${rt.agent.name}`, role: rt.agent.role, actor: ACTOR });
    rt.token = { id, secret: token, role: rt.agent.role };
    rt.agent = { ...rt.agent, tokenId: id };
    this.deps.store.setToken(rt.agent.id, id);
    if (old && this.procsUsing(rt, old.id) === 0) this.revokeToken(old.id, 'the managed agent changed role');
  }

  private launch(slot: Slot, as: 'current' | 'replacement'): void {
    const rt = slot.rt;
    const token = rt.token!;
    const seq = ++this.seq;
    const marker = `${this.opts.ownerKey}/${rt.agent.id}/${slot.instance}/${seq}`;
    const name = `${rt.agent.name}-${slot.instance}`;
    let resolveExit!: () => void;
    const exit = new Promise<void>((r) => (resolveExit = r));
    let handle: LaunchedProcess;
    try {
      handle = this.opts.spawner.launch({ managedId: rt.agent.id, definition: definitionOf(rt.agent), instance: slot.instance, name, agentUrl: this.opts.agentUrl, token: token.secret, marker });
    } catch (e) {
      slot.failed = `could not start: ${e instanceof Error ? e.message : String(e)}`;
      slot.lastExit = { code: null, signal: null, at: this.iso(this.deps.clock.now()), description: slot.failed };
      this.deps.store.supervisorEvent(rt.agent.id, 'managed_process.failed', { instance: slot.instance, reason: slot.failed });
      return;
    }
    const proc: Proc = { seq, slot, runVersion: rt.runVersion, version: rt.agent.version, tokenId: token.id, marker, name, handle, startedAt: this.deps.clock.now(), instanceId: null, up: false, stopping: false, exited: false, timer: null, exit, resolveExit };
    slot[as] = proc;
    if (handle.pid !== undefined) {
      this.deps.store.recordProcess({ pgid: handle.pid, managedId: rt.agent.id, instance: slot.instance, marker, startTicks: handle.startTicks, startedAt: proc.startedAt });
    }
    handle.onOutput((stream, text) => this.output(slot, stream, text));
    handle.onExit((x) => this.onExit(proc, x));
    // Up for a rolling replacement, and stable for the backoff, once it has kept running this long.
    proc.timer = this.deps.clock.setTimeout(() => {
      proc.timer = null;
      const wasLooping = slot.crashLooping;
      slot.quickExits = 0;
      slot.crashLooping = false;
      if (wasLooping) this.deps.events.emit({ type: 'managed.changed', managedAgentId: rt.agent.id, action: 'recovered', message: `${rt.agent.name} instance ${slot.instance} has kept running since its last start` });
      this.markUp(proc);
    }, this.timing.quickExitMs);
  }

  private markUp(proc: Proc): void {
    if (proc.up || proc.exited || proc.stopping) return;
    proc.up = true;
    const slot = proc.slot;
    if (slot.replacement === proc) {
      const old = slot.current;
      slot.current = proc;
      slot.replacement = null;
      if (old) this.stopProc(old, this.drainKillAfterMs(slot.rt), false);
    }
    this.changed(slot.rt.agent.id, 'up');
  }

  private stopProc(p: Proc, killAfterMs: number, urgent: boolean): void {
    if (p.exited) return;
    const slot = p.slot;
    if (slot.current === p) slot.current = null;
    if (slot.replacement === p) slot.replacement = null;
    slot.draining.add(p);
    if (p.stopping && !urgent) return;
    p.stopping = true;
    p.handle.stop(killAfterMs, urgent);
  }

  private onExit(proc: Proc, exit: ProcessExit): void {
    if (proc.exited) return;
    proc.exited = true;
    proc.timer?.cancel();
    const { clock, store } = this.deps;
    const slot = proc.slot;
    const rt = slot.rt;
    const now = clock.now();
    const uptime = now - proc.startedAt;
    const description = describeExit(exit, uptime);
    const record: ManagedExit = { code: exit.code, signal: exit.signal, at: this.iso(now), description };
    const pid = proc.handle.pid;
    // What the process left behind (a killed command agent's commands, what left its group with
    // setsid) goes too, then its record. `stop` waits for this as well (invariant 5).
    const reaping = this.opts.spawner
      .reapMarker(proc.marker)
      .then(() => {
        if (pid !== undefined && !this.stopped) store.forgetProcess(pid);
      })
      .catch((e: unknown) => this.deps.logger.warn('managed agents: could not end what a process left behind', { marker: proc.marker, error: String(e) }))
      .finally(() => this.reaping.delete(reaping));
    this.reaping.add(reaping);
    if (pid !== undefined && this.stopped) store.forgetProcess(pid);
    slot.draining.delete(proc);
    this.output(slot, 'stderr', `— process ${pid ?? '(never started)'} ended: ${description}`);
    const unexpected = slot.current === proc || slot.replacement === proc;
    if (slot.current === proc) slot.current = null;
    if (slot.replacement === proc) slot.replacement = null;
    if (unexpected || !proc.stopping) slot.lastExit = record;
    if (unexpected && !this.stopped && !rt.deleted) this.afterUnexpectedExit(slot, proc, exit, uptime, record);
    if (rt.token && proc.tokenId !== rt.token.id && this.procsUsing(rt, proc.tokenId) === 0) this.revokeToken(proc.tokenId, 'no process of the managed agent uses it any more');
    if (rt.deleted && rt.token && this.procsUsing(rt, rt.token.id) === 0) this.revokeToken(rt.token.id, 'managed agent deleted');
    if (slot.instance > rt.agent.instances && this.procsOf(slot).length === 0) rt.slots.delete(slot.instance);
    this.forgetIfDone(rt);
    proc.resolveExit();
    this.changed(rt.agent.id, 'exit');
  }

  private afterUnexpectedExit(slot: Slot, proc: Proc, exit: ProcessExit, uptime: number, record: ManagedExit): void {
    const rt = slot.rt;
    const detail = { instance: slot.instance, pid: proc.handle.pid ?? null, code: exit.code, signal: exit.signal, uptimeMs: uptime };
    if (exit.error || exit.code === EXIT_CANNOT_START) {
      slot.failed = record.description;
      this.deps.store.supervisorEvent(rt.agent.id, 'managed_process.failed', { ...detail, reason: record.description });
      // A failed replacement leaves the current process running (invariant 4).
      return;
    }
    slot.quickExits = uptime < this.timing.quickExitMs ? slot.quickExits + 1 : 0;
    const wasLooping = slot.crashLooping;
    slot.crashLooping = slot.quickExits >= this.timing.crashLoopAfter;
    const delay = slot.crashLooping
      ? this.timing.crashLoopDelayMs
      : Math.min(this.timing.maxBackoffMs, this.timing.firstBackoffMs * 2 ** Math.max(0, slot.quickExits - 1));
    const enteredLoop = slot.crashLooping && !wasLooping;
    this.deps.store.supervisorEvent(rt.agent.id, enteredLoop ? 'managed_process.crash_looping' : 'managed_process.exit', { ...detail, restartInMs: delay });
    if (enteredLoop) {
      const message = `${rt.agent.name} instance ${slot.instance} exited ${slot.quickExits} times in a row right after starting (last: ${record.description}); it is retried every ${Math.round(delay / 1000)} s.`;
      this.deps.events.emit({ type: 'managed.changed', managedAgentId: rt.agent.id, action: 'crash_looping', message });
    }
    slot.nextStartAt = this.deps.clock.now() + delay;
    slot.retry = this.deps.clock.setTimeout(() => {
      slot.retry = null;
      slot.nextStartAt = null;
      slot.restarts++;
      this.reconcile(rt);
    }, delay);
  }

  private cancelRetry(slot: Slot): void {
    slot.retry?.cancel();
    slot.retry = null;
    slot.nextStartAt = null;
  }

  // ---- instances: which process became which agent instance ----

  private onInstance(instanceId: string, name: string, tokenId: string | null, status: string): void {
    if (status !== 'online' || !tokenId) return;
    for (const rt of this.runtimes.values()) {
      if (rt.deleted) continue;
      const candidates: Proc[] = [];
      for (const slot of rt.slots.values()) for (const p of [slot.current, slot.replacement]) if (p && !p.exited && p.tokenId === tokenId) candidates.push(p);
      if (candidates.length === 0) continue;
      if (candidates.some((p) => p.instanceId === instanceId)) return;
      const free = candidates.filter((p) => p.instanceId === null);
      const proc = free.find((p) => p.name === name) ?? free.sort((a, b) => a.startedAt - b.startedAt)[0];
      if (!proc) return;
      proc.instanceId = instanceId;
      this.markUp(proc);
      this.changed(rt.agent.id, 'hello');
      return;
    }
  }

  // ---- helpers ----

  private forgetIfDone(rt: Runtime): void {
    if (rt.deleted && [...rt.slots.values()].every((s) => this.procsOf(s).length === 0)) this.runtimes.delete(rt.agent.id);
  }

  private procsOf(slot: Slot): Proc[] {
    return [slot.current, slot.replacement, ...slot.draining].filter((p): p is Proc => !!p && !p.exited);
  }

  private procsUsing(rt: Runtime, tokenId: string): number {
    let n = 0;
    for (const slot of rt.slots.values()) for (const p of this.procsOf(slot)) if (p.tokenId === tokenId) n++;
    return n;
  }

  private drainKillAfterMs(rt: Runtime): number {
    return (drainGraceS(rt.agent) + 30) * 1000;
  }

  private revokeToken(id: string, why: string): void {
    try {
      this.deps.tokens.revoke({ id, reason: why, actor: ACTOR });
    } catch {
      /* already revoked or gone: nothing to do */
    }
  }

  private output(slot: Slot, stream: 'stdout' | 'stderr', text: string): void {
    slot.output.push({ at: this.iso(this.deps.clock.now()), stream, text: cutText(text, 2000, '…') });
    if (slot.output.length > this.timing.outputLines) slot.output.splice(0, slot.output.length - this.timing.outputLines);
  }

  private slotView(slot: Slot, p: Proc | null): ManagedProcess {
    if (p) {
      const status: ManagedProcessStatus = p.stopping ? 'stopping' : p.up ? 'running' : 'starting';
      const view = this.procView(slot, p, status);
      if (slot.replacement && slot.current) view.message = `starting its replacement (version ${slot.replacement.version})`;
      return view;
    }
    const rt = slot.rt;
    let status: ManagedProcessStatus;
    let message: string | null;
    if (slot.failed) {
      status = 'failed';
      message = `${slot.failed}; not restarted until it is started again or changed`;
    } else if (slot.retry) {
      status = slot.crashLooping ? 'crash_looping' : 'backoff';
      message = slot.crashLooping ? `crash looping: ${slot.quickExits} quick exits in a row; trying again every ${Math.round(this.timing.crashLoopDelayMs / 1000)} s` : `restarting after ${slot.quickExits || 1} exit(s)`;
    } else {
      status = 'stopped';
      message = rt.agent.desired === 'stopped' ? 'the managed agent is stopped' : slot.held ? 'this instance was stopped by the operator' : this.stopped ? 'Gaffer stopped' : null;
    }
    return { instance: slot.instance, pid: null, status, startedAt: null, restarts: slot.restarts, lastExit: slot.lastExit, instanceId: null, nextStartAt: slot.nextStartAt === null ? null : this.iso(slot.nextStartAt), message, version: rt.agent.version };
  }

  private procView(slot: Slot, p: Proc, status: ManagedProcessStatus): ManagedProcess {
    return {
      instance: slot.instance,
      pid: p.handle.pid ?? null,
      status,
      startedAt: this.iso(p.startedAt),
      restarts: slot.restarts,
      lastExit: slot.lastExit,
      instanceId: p.instanceId,
      nextStartAt: null,
      message: null,
      version: p.version,
    };
  }

  private iso(ms: number): string {
    return new Date(ms).toISOString();
  }

  private changed(id: string, action: string): void {
    this.deps.events.emit({ type: 'managed.changed', managedAgentId: id, action });
  }
}
