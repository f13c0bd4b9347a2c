/**
 * Which `log` frames may be written at all, decided on the main thread before a frame is queued:
 * one agent token's rate, and the disk's free space. (The total the logs take is the store's
 * business, log-store invariant 6.)
 *
 * Invariants:
 * 1. Per agent token (an instance without one counts alone), a token bucket of bytes:
 *    `logBytesPerSecondPerToken` sustained, `logBurstBytesPerToken` at once, on the monotonic
 *    clock. A frame is taken whole or refused whole (`rate_limited`); a refused frame takes nothing
 *    from the bucket, so an agent that waits and resends gets through.
 * 2. The floor: while the disk of the log directory has less free space than
 *    max(`minFreeDiskMb`, the main database's size), every frame is refused (`unavailable`): the
 *    last free space is the main database's, to grow and for the copy a storage fault's rescue
 *    writes (db/storage-watch.ts). Reading the disk costs a `statfs`, so it is read at most every
 *    DISK_CHECK_MS; in between, the frames taken since are subtracted from the last reading, and a
 *    reading is taken sooner (at most every DISK_RECHECK_MS) once that estimate falls below the floor.
 * 3. The operator is told once when frames start being refused for the floor and once when they
 *    are taken again (a log line each, and `refusing()` for `/status` and Settings → Logs).
 */
import type { Clock } from '../../common/clock';
import { GafferError } from '../../common/errors';
import { isoTime } from '../../common/iso-time';
import type { Logger } from '../../common/logger';
import type { LogRefusal, LogSettings } from '../../common/logs';
import { TokenBucket } from '../hub';

/** Invariant 2: how often the free space is read … */
export const DISK_CHECK_MS = 1000;
/** … and how soon again once the estimate says the floor is reached. */
export const DISK_RECHECK_MS = 100;

const MIB = 1024 * 1024;

/** What the disk looks like now: free bytes where the logs are, and the main database's size. */
export interface DiskReading {
  freeBytes: number;
  dbBytes: number;
}

export interface AdmissionDeps {
  clock: Pick<Clock, 'now' | 'monotonic'>;
  logger: Logger;
  settings: () => LogSettings;
  /** The disk now (statfs of the log directory, stat of the database); injected by tests. */
  disk: () => DiskReading;
}

const mib = (n: number) => `${Math.floor(n / MIB)} MiB`;

export class LogAdmission {
  private readonly buckets = new Map<string, TokenBucket>();
  private reading: (DiskReading & { at: number; takenSince: number }) | undefined;
  private refusal: LogRefusal | null = null;

  constructor(private readonly d: AdmissionDeps) {}

  /** The settings changed: buckets start again from the new rate and burst. */
  reset(): void {
    this.buckets.clear();
    this.reading = undefined;
  }

  /** Why frames are refused for the floor right now, or null (invariant 3). */
  refusing(): LogRefusal | null {
    return this.refusal;
  }

  /**
   * Takes a frame of `bytes` from the sender `key` (its token id, or its instance), or throws the
   * refusal: `unavailable` past the floor, `rate_limited` past the token's rate.
   */
  admit(key: string, bytes: number): void {
    this.checkFloor(bytes);
    const s = this.d.settings();
    let bucket = this.buckets.get(key);
    if (!bucket) this.buckets.set(key, (bucket = new TokenBucket(s.logBytesPerSecondPerToken, s.logBurstBytesPerToken, this.d.clock.monotonic())));
    if (!bucket.take(this.d.clock.monotonic(), bytes)) {
      throw new GafferError(
        'rate_limited',
        `this agent token is sending log lines faster than ${s.logBytesPerSecondPerToken} bytes/s (bursts of ${s.logBurstBytesPerToken}): wait, then resend the lines not acknowledged`,
      );
    }
    if (this.reading) this.reading.takenSince += bytes;
  }

  /** Invariant 2: a frame of `bytes` may not take the free space below the floor. */
  private checkFloor(bytes: number): void {
    const now = this.d.clock.monotonic();
    const floorOf = (r: DiskReading) => Math.max(this.d.settings().minFreeDiskMb * MIB, r.dbBytes);
    let r = this.reading;
    const stale = !r || now - r.at >= DISK_CHECK_MS || (r.freeBytes - r.takenSince - bytes < floorOf(r) && now - r.at >= DISK_RECHECK_MS);
    if (stale) {
      try {
        r = this.reading = { ...this.d.disk(), at: now, takenSince: 0 };
      } catch (e) {
        // A disk that cannot be read is no reason to stop logging: the store's own errors still refuse.
        this.d.logger.warn('logs: could not read the free disk space', { error: e instanceof Error ? e.message : String(e) });
        r = this.reading = { freeBytes: Infinity, dbBytes: 0, at: now, takenSince: 0 };
      }
    }
    const free = r!.freeBytes - r!.takenSince;
    const floor = floorOf(r!);
    if (free - bytes >= floor) {
      if (this.refusal) {
        this.d.logger.info(`logs: ${mib(free)} free again on the disk of the data directory; log lines are taken again`);
        this.refusal = null;
      }
      return;
    }
    if (!this.refusal) {
      const message = `Log lines are refused: only ${mib(free)} free on the disk of the data directory, below the ${mib(floor)} kept for the main database. Free disk space, or lower "Keep at most" in Settings → Logs; lines are taken again by themselves.`;
      this.refusal = { message, since: isoTime(this.d.clock.now()), freeBytes: free, floorBytes: floor };
      this.d.logger.error(`logs: ${message}`);
    }
    throw new GafferError('unavailable', this.refusal.message);
  }
}
