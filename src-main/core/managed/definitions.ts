/**
 * Managed-agent definitions in the database, and the ledger of process groups Gaffer started.
 *
 * Invariants:
 * 1. Only the operator changes a definition; every create, change, delete and control action is
 *    audited with its actor and reason in the same transaction (subject `managed:<id>`).
 * 2. A stored definition always passes `managedDefinition` (a PATCH is merged, then validated as a
 *    whole): bad input is `bad_request` naming the field and changes nothing.
 * 3. `version` grows by one on every change of the definition (not on start/stop), so each
 *    process shows which version it was started with.
 * 4. The process ledger holds a row per live process group Gaffer started (primary key: pgid);
 *    rows are deleted once the group is seen gone.
 * 5. `env` may hold API keys: the column holds it sealed (core/secrets, purpose `managed.env`);
 *    the store opens it for the API and the supervisor, which get what was given, as before.
 */
import { z } from 'zod';
import { GafferError } from '../../common/errors';
import {
  DEFINITION_DEFAULTS,
  managedAgentInput,
  managedAgentPatch,
  managedDefinition,
  type ManagedAgentPatch,
  type ManagedAgentRecord,
  type ManagedDefinition,
} from '../../common/managed-agents';
import { actorName, reason as reasonSchema } from '../../common/schemas';
import { parseOrThrow } from '../../common/validate';
import type { CoreContext } from '../context';
import { newId } from '../ids';
import { isSealed, type SecretBox } from '../secrets';
import { prepareManagedStatements, type ManagedRow as Row } from './store';

/** A stored definition (the record of common/managed-agents.ts). */
export type StoredManagedAgent = ManagedAgentRecord;

export interface RecordedProcess {
  pgid: number;
  managedId: string;
  instance: number;
  marker: string;
  startTicks: string | null;
  startedAt: number;
}

/** Fields whose change means the processes must be replaced (everything but `instances`). */
export const RESTART_FIELDS = ['role', 'command', 'mode', 'cwd', 'env', 'timeoutS', 'shell', 'parse', 'workspace'] as const satisfies ReadonlyArray<keyof ManagedDefinition>;

export const subjectOf = (id: string) => `managed:${id}`;

function toStored(r: Row, secrets: SecretBox): StoredManagedAgent {
  return {
    id: r.id,
    name: r.name,
    role: r.role,
    command: JSON.parse(r.command) as string[],
    mode: r.mode,
    instances: r.instances,
    cwd: r.cwd,
    env: JSON.parse(secrets.open(r.env, 'managed.env', `managed agent ${r.name}'s environment`)) as Record<string, string>,
    timeoutS: r.timeout_s,
    shell: r.shell === 1,
    parse: r.parse as ManagedDefinition['parse'],
    workspace: r.workspace ? (JSON.parse(r.workspace) as ManagedDefinition['workspace']) : null,
    desired: r.desired,
    tokenId: r.token_id,
    version: r.version,
    createdAt: new Date(r.created_at).toISOString(),
    updatedAt: new Date(r.updated_at).toISOString(),
    updatedBy: r.updated_by,
  };
}

export function definitionOf(a: StoredManagedAgent): ManagedDefinition {
  const { name, role, command, mode, instances, cwd, env, timeoutS, shell, parse, workspace } = a;
  return { name, role, command, mode, instances, cwd, env, timeoutS, shell, parse, workspace };
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const actorOnly = z.strictObject({ actor: actorName, reason: reasonSchema.optional() });

export class ManagedAgentStore {
  private readonly q;

  constructor(
    private readonly ctx: CoreContext,
    private readonly secrets: SecretBox,
  ) {
    this.q = prepareManagedStatements(ctx.db);
  }

  private stored(r: Row): StoredManagedAgent {
    return toStored(r, this.secrets);
  }

  /** Environments an earlier version stored in clear, sealed (invariant 5); how many. Inside a write. */
  sealClearValues(): number {
    const clear = this.q.envs.all().filter((r) => !isSealed(r.env));
    for (const r of clear) this.q.sealEnv.run(this.secrets.seal(r.env, 'managed.env'), r.id);
    return clear.length;
  }

  list(): StoredManagedAgent[] {
    return this.q.all.all().map((r) => this.stored(r));
  }

  /** By id or by name. */
  get(ref: string): StoredManagedAgent {
    const r = this.q.byId.get(ref) ?? this.q.byName.get(ref);
    if (!r) throw new GafferError('not_found', `no managed agent ${JSON.stringify(ref).slice(0, 120)}`);
    return this.stored(r);
  }

  private columns(d: ManagedDefinition) {
    return {
      role: d.role,
      command: JSON.stringify(d.command),
      mode: d.mode,
      instances: d.instances,
      cwd: d.cwd,
      env: this.secrets.seal(JSON.stringify(d.env), 'managed.env'),
      timeout_s: d.timeoutS,
      shell: d.shell ? 1 : 0,
      parse: d.parse,
      workspace: d.workspace ? JSON.stringify(d.workspace) : null,
    };
  }

  create(input: unknown, opts: { actor: string }): StoredManagedAgent {
    const { actor } = parseOrThrow(actorOnly, opts, 'options');
    const { reason, ...fields } = parseOrThrow(managedAgentInput, input, 'managed agent');
    const def = parseOrThrow(managedDefinition, { ...DEFINITION_DEFAULTS, ...fields }, 'managed agent');
    return this.ctx.store.write(() => {
      if (this.q.byName.get(def.name)) throw new GafferError('conflict', `a managed agent named ${def.name} exists already`);
      const id = newId('mgd');
      const now = this.ctx.clock.now();
      this.q.insert.run({ id, name: def.name, ...this.columns(def), now, actor });
      this.ctx.audit.append({ type: 'managed_agent.create', actor, subject: subjectOf(id), detail: { definition: redact(def), reason: reason ?? null } });
      this.ctx.store.emit({ type: 'managed.changed', managedAgentId: id, action: 'create' });
      return this.stored(this.q.byId.get(id)!);
    });
  }

  /** Applies a PATCH; `changed` lists the fields whose value changed. */
  update(ref: string, patchInput: unknown, opts: { actor: string }): { agent: StoredManagedAgent; changed: Array<keyof ManagedDefinition> } {
    const { actor } = parseOrThrow(actorOnly, opts, 'options');
    const { reason, ...patch }: ManagedAgentPatch = parseOrThrow(managedAgentPatch, patchInput, 'managed agent change');
    return this.ctx.store.write(() => {
      const current = this.get(ref);
      const before = definitionOf(current);
      const next = parseOrThrow(managedDefinition, { ...before, ...patch }, 'managed agent change');
      const changed = (Object.keys(next) as Array<keyof ManagedDefinition>).filter((k) => !sameValue(before[k], next[k]));
      if (changed.length === 0) return { agent: current, changed };
      this.q.update.run({ id: current.id, ...this.columns(next), now: this.ctx.clock.now(), actor });
      const detail: Record<string, unknown> = { changed: Object.fromEntries(changed.map((k) => [k, { from: redactField(k, before[k]), to: redactField(k, next[k]) }])), reason: reason ?? null };
      this.ctx.audit.append({ type: 'managed_agent.update', actor, subject: subjectOf(current.id), detail });
      this.ctx.store.emit({ type: 'managed.changed', managedAgentId: current.id, action: 'update' });
      return { agent: this.stored(this.q.byId.get(current.id)!), changed };
    });
  }

  remove(ref: string, opts: { actor: string; reason?: string }): StoredManagedAgent {
    const { actor, reason } = parseOrThrow(actorOnly, opts, 'options');
    return this.ctx.store.write(() => {
      const current = this.get(ref);
      this.q.remove.run(current.id);
      this.ctx.audit.append({ type: 'managed_agent.delete', actor, subject: subjectOf(current.id), detail: { name: current.name, reason: reason ?? null } });
      this.ctx.store.emit({ type: 'managed.changed', managedAgentId: current.id, action: 'delete' });
      return current;
    });
  }

  /**
   * Audits a control action (start / stop / restart, of the agent or one instance) and, for the
   * whole agent, stores what the operator wants (`desired`).
   */
  control(ref: string, action: 'start' | 'stop' | 'restart', opts: { actor: string; reason?: string; instance?: number }): StoredManagedAgent {
    const { actor, reason } = parseOrThrow(actorOnly, { actor: opts.actor, ...(opts.reason !== undefined ? { reason: opts.reason } : {}) }, 'options');
    return this.ctx.store.write(() => {
      const current = this.get(ref);
      if (opts.instance !== undefined && opts.instance > current.instances) {
        throw new GafferError('bad_request', `instance must be from 1 to ${current.instances} (the agent runs ${current.instances})`);
      }
      if (opts.instance === undefined && action !== 'restart') {
        this.q.desired.run(action === 'start' ? 'running' : 'stopped', this.ctx.clock.now(), actor, current.id);
      }
      this.ctx.audit.append({ type: `managed_agent.${action}`, actor, subject: subjectOf(current.id), detail: { instance: opts.instance ?? null, reason: reason ?? null } });
      this.ctx.store.emit({ type: 'managed.changed', managedAgentId: current.id, action });
      return this.stored(this.q.byId.get(current.id)!);
    });
  }

  setToken(id: string, tokenId: string | null): void {
    this.ctx.store.write(() => this.q.token.run(tokenId, id));
  }

  /** Audits something the supervisor did on its own (a process exited, crash looping, …). */
  supervisorEvent(id: string, type: string, detail: Record<string, unknown>): void {
    this.ctx.store.write(() => this.ctx.audit.append({ type, actor: 'gaffer:supervisor', subject: subjectOf(id), detail }));
  }

  // ---- process ledger (invariant 4) ----

  recordProcess(p: RecordedProcess): void {
    this.ctx.store.write(() => this.q.recordProcess.run(p.pgid, p.managedId, p.instance, p.marker, p.startTicks, p.startedAt));
  }

  forgetProcess(pgid: number): void {
    this.ctx.store.write(() => this.q.forgetProcess.run(pgid));
  }

  recordedProcesses(): RecordedProcess[] {
    return this.q.processes.all().map((r) => ({ pgid: r.pgid, managedId: r.managed_id, instance: r.instance, marker: r.marker, startTicks: r.start_ticks, startedAt: r.started_at }));
  }
}

/** Environment values may be secrets (API keys): the audit log records their names only. */
function redact(d: ManagedDefinition): Record<string, unknown> {
  return { ...d, env: redactField('env', d.env) };
}

function redactField(k: keyof ManagedDefinition, v: unknown): unknown {
  return k === 'env' && v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).map((name) => [name, '…'])) : v;
}
