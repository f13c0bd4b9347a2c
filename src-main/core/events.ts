/**
 * Typed events out of the core. The console stream and the tests observe the same events.
 * Emitted only after the transaction that caused them has committed.
 */
import type { AuditEvent, Instance, Task } from '../common/model';
import type { TokenInfo } from './auth/tokens';

export interface CoreEventMap {
  'task.created': { task: Task };
  'task.claimed': { task: Task; instanceId: string; fence: number };
  'task.renewed': { taskId: number; instanceId: string; fence: number; expiresAt: number };
  'task.changed': { task: Task; from: string; to: string; actor: string };
  'lock.expired': { taskId: number; instanceId: string; fence: number; reason: string };
  'instance.changed': { instance: Instance };
  'audit.appended': { event: AuditEvent };
  'clock.jumped': { from: number; to: number; gapMs: number };
  'token.revoked': { token: TokenInfo };
}

export type CoreEventType = keyof CoreEventMap;
export type CoreEvent = { [K in CoreEventType]: { type: K } & CoreEventMap[K] }[CoreEventType];
export type CoreEventOf<K extends CoreEventType> = Extract<CoreEvent, { type: K }>;

export interface Disposable {
  dispose(): void;
}

type Listener = (e: CoreEvent) => void;

export class EventBus {
  private listeners = new Map<string, Set<Listener>>();
  private any = new Set<Listener>();

  constructor(private readonly onListenerError: (e: unknown) => void = () => {}) {}

  on<K extends CoreEventType>(type: K, fn: (e: CoreEventOf<K>) => void): Disposable {
    let set = this.listeners.get(type);
    if (!set) this.listeners.set(type, (set = new Set()));
    const l = fn as Listener;
    set.add(l);
    return { dispose: () => set.delete(l) };
  }

  onAny(fn: Listener): Disposable {
    this.any.add(fn);
    return { dispose: () => this.any.delete(fn) };
  }

  emit(e: CoreEvent): void {
    for (const l of [...(this.listeners.get(e.type) ?? []), ...this.any]) {
      try {
        l(e);
      } catch (err) {
        this.onListenerError(err);
      }
    }
  }
}
