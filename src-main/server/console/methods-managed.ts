/**
 * The managed-agents part of the console's method table: `managedAgents.*`, thin calls into
 * `core.managed`, which validates again and audits every change with the console's actor
 * (`operator:desktop` / `operator:browser`) and the operator's reason.
 */
import type { ConsoleInput, ConsoleMethod, ConsoleResult } from '../../common/console-api';
import type { Core } from '../../core/create-core';

export type ManagedMethod = Extract<ConsoleMethod, `managedAgents.${string}`>;

export function isManagedMethod(m: string): m is ManagedMethod {
  return m.startsWith('managedAgents.');
}

type Args<M extends ConsoleMethod> = ConsoleInput<M>;
export type ManagedHandlers = { [M in ManagedMethod]: (args: Args<M>) => ConsoleResult<M> };

export function createManagedHandlers(core: Core, actor: string): ManagedHandlers {
  const m = core.managed;
  return {
    'managedAgents.list': () => m.list(),
    'managedAgents.get': (a) => m.get(a.id),
    'managedAgents.create': (a) => m.create({ ...a.definition, reason: a.reason }, { actor }),
    'managedAgents.update': (a) => m.update(a.id, { ...a.patch, reason: a.reason }, { actor }),
    'managedAgents.delete': (a) => m.remove(a.id, { actor, reason: a.reason }),
    'managedAgents.control': (a) => m.control(a.id, a.action, { actor, reason: a.reason, ...(a.instance !== undefined ? { instance: a.instance } : {}) }),
  };
}
