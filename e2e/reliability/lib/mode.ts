/**
 * Bounded (default, CI) vs full (`GAFFER_RELIABILITY=full`) mode, a seeded random source, and the
 * figures each scenario prints (copied into docs/reliability.md).
 *
 * Every scenario derives its random choices from `GAFFER_RELIABILITY_SEED` (default below), so a
 * failing run can be replayed exactly: the seed is printed with every figure line.
 */

export const FULL = process.env.GAFFER_RELIABILITY === 'full';
export const MODE = FULL ? 'full' : 'bounded';

const envSeed = Number.parseInt(process.env.GAFFER_RELIABILITY_SEED ?? '', 10);
export const SEED = Number.isFinite(envSeed) ? envSeed >>> 0 : 0x6aff3e;

/** `bounded` in CI, `full` with GAFFER_RELIABILITY=full. */
export function pick<T>(bounded: T, full: T): T {
  return FULL ? full : bounded;
}

/** A small, fast, seeded PRNG (mulberry32) with helpers. */
export class Rng {
  private s: number;

  constructor(seed: number) {
    this.s = seed >>> 0 || 1;
  }

  /** A float in [0, 1). */
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** A derived generator (independent stream per scenario / worker). */
  fork(salt: number): Rng {
    return new Rng((this.int(0, 0xffffffff) ^ Math.imul(salt + 1, 0x9e3779b1)) >>> 0);
  }
}

export function rngFor(scenario: string): Rng {
  let h = SEED;
  for (const c of scenario) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return new Rng(h);
}

/** One line per scenario with its figures, e.g. `[reliability] kill9 bounded seed=… rounds=20 …`. */
export function figures(scenario: string, values: Record<string, string | number | boolean>): void {
  const parts = Object.entries(values).map(([k, v]) => `${k}=${typeof v === 'number' && !Number.isInteger(v) ? v.toFixed(2) : v}`);
  console.log(`[reliability] ${scenario} mode=${MODE} seed=${SEED} ${parts.join(' ')}`);
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `pred` until it returns something truthy (real time), or throws after `timeoutMs`. */
export async function until<T>(pred: () => T | undefined | null | false | Promise<T | undefined | null | false>, what: string, timeoutMs = 15_000, everyMs = 10): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = await pred();
    if (v) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}
