/**
 * The contributions that close a loop between two modules.
 *
 * What one module needs of another is handed to it when it is built, in dependency order
 * (create-core.ts). A few needs run against that order because the two modules need each other:
 * the task board's claim gate (the jobs module's role pauses and the budgets' daily caps, both
 * built on the board), the hub's log sink (the logs module, built on the jobs module, built on the
 * hub), the budgets' hold of a run (the jobs module, built on the budgets' gate), the inbox's
 * wake-up on a snooze (its checks, built on the inbox). For each of those, the module that needs
 * it is given a `Late` when it is built; the module that provides it fills it once; `createCore`
 * seals every `Late` after the last module stands.
 *
 * Invariants:
 * 1. Nothing defaults to a no-op: a `Late` left unfilled fails `createCore` (`CoreWiringError`,
 *    naming who needs what), so a forgotten contribution cannot silently switch off a pause or a
 *    spend cap.
 * 2. A `Late` is filled once; a second provider is refused.
 * 3. Read before the seal, a `Late` throws: no module acts on a contribution while the core is
 *    still being assembled.
 */

/** A module's need that is filled after the module is built (see above). The module only reads it. */
export interface Needed<T> {
  get(): T;
}

export class CoreWiringError extends Error {
  override readonly name = 'CoreWiringError';
}

export class Late<T> implements Needed<T> {
  private value: T | undefined;
  private by: string | undefined;
  private sealed = false;

  /** `what` is needed by `neededBy` (both in words, for the error). */
  constructor(
    readonly what: string,
    readonly neededBy: string,
  ) {}

  /** A `Late` already filled and sealed: for an assembly that provides the contribution up front (the rehearsal sandbox). */
  static of<T>(what: string, neededBy: string, value: T, by: string): Late<T> {
    const l = new Late<T>(what, neededBy);
    l.provide(value, by);
    l.seal();
    return l;
  }

  provide(value: T, by: string): void {
    if (this.sealed) throw new CoreWiringError(`${this.what} for ${this.neededBy} is sealed: ${by} comes too late`);
    if (this.by !== undefined) throw new CoreWiringError(`${this.what} for ${this.neededBy} is provided twice: by ${this.by} and by ${by}`);
    this.value = value;
    this.by = by;
  }

  get(): T {
    if (!this.sealed) throw new CoreWiringError(`${this.what} for ${this.neededBy} was read before the core was assembled`);
    return this.value as T;
  }

  seal(): void {
    if (this.by === undefined) throw new CoreWiringError(`${this.neededBy} needs ${this.what}, and no module provided it`);
    this.sealed = true;
  }
}

/** Seals every `Late` of an assembly (invariant 1): the first one unfilled throws. */
export function sealAll(lates: ReadonlyArray<Late<unknown>>): void {
  for (const l of lates) l.seal();
}
