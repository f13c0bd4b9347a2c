/**
 * Which log frames are taken (admission.ts), through the log service on an injected clock and an
 * injected disk reading: a token's rate and burst, shared by its instances and not by other
 * tokens, and the free-space floor kept for the main database.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../common/clock';
import type { Logger } from '../../common/logger';
import { createCore, type Core } from '../create-core';
import { tempDir } from '../tests/test-core';
import { DISK_CHECK_MS, type DiskReading } from './admission';

const KIB = 1024;
const MIB = 1024 * KIB;
const GIB = 1024 * MIB;

let core: Core | undefined;
afterEach(async () => {
  await core?.logs.close();
  core?.close();
  core = undefined;
});

function setup(disk: DiskReading = { freeBytes: 100 * GIB, dbBytes: MIB }) {
  const clock = new ManualClock();
  const said: string[] = [];
  const logger: Logger = { info: (m) => said.push(`info ${m}`), warn: (m) => said.push(`warn ${m}`), error: (m) => said.push(`error ${m}`) };
  const reading = { ...disk };
  let reads = 0;
  core = createCore({
    clock,
    dataDir: tempDir('gaffer-admission-'),
    logger,
    logs: {
      inline: true,
      disk: () => {
        reads++;
        return { ...reading };
      },
    },
  });
  const c = core;
  const tokenA = c.tokens.create({ name: 'a', actor: 'test' }).id;
  const tokenB = c.tokens.create({ name: 'b', actor: 'test' }).id;
  /** An instance of `tokenId` holding a fresh task. */
  const holder = (tokenId: string) => {
    const inst = c.instances.register({ role: 'dev', name: 'x', tokenId }).id;
    const { task } = c.tasks.create({ title: 't', role: 'dev' }, { actor: 'test' });
    c.locks.claim({ instanceId: inst, role: 'dev' });
    return { inst, taskId: task.id };
  };
  return { c, clock, said, reading, reads: () => reads, tokenA, tokenB, holder };
}

/** A frame of 4 lines of 16 000 characters (~64 KiB), as the parsed path or as text. */
const lines = Array.from({ length: 4 }, (_, i) => ({ text: `${i}`.repeat(16_000) }));
const logParsed = (c: Core, h: { inst: string; taskId: number }) => c.logs.log(h.inst, { id: 1, type: 'log', taskId: h.taskId, lines });
const logText = (c: Core, h: { inst: string; taskId: number }) => c.logs.logText(h.inst, JSON.stringify({ id: 'x', type: 'log', taskId: h.taskId, lines }))!.result;
const stored = async (c: Core, taskId: number) => (await c.logs.read({ subject: `task:${taskId}`, limit: 100 })).items.length;

describe('a token\'s log rate', () => {
  it('a burst, then the sustained rate, shared by every instance of the token; other tokens are not touched; a refused frame stores nothing', async () => {
    const { c, clock, tokenA, tokenB, holder } = setup();
    c.logs.setSettings({ logBytesPerSecondPerToken: 64 * KIB, logBurstBytesPerToken: 256 * KIB }, { actor: 'test', reason: 'test' });
    const [a1, a2, b] = [holder(tokenA), holder(tokenA), holder(tokenB)];
    // 256 KiB of burst: four ~64 KiB frames, two from each instance of token A, by either path.
    await expect(logParsed(c, a1)).resolves.toMatchObject({ stored: 4 });
    await expect(logText(c, a2)).resolves.toMatchObject({ stored: 4 });
    await expect(logParsed(c, a2)).resolves.toMatchObject({ stored: 4 });
    await expect(logText(c, a1)).resolves.toMatchObject({ stored: 4 });
    // The fifth is refused whole, on either path; nothing of it is stored.
    await expect(logParsed(c, a1)).rejects.toMatchObject({ code: 'rate_limited', message: expect.stringContaining('65536 bytes/s') });
    await expect(logText(c, a2)).rejects.toMatchObject({ code: 'rate_limited' });
    expect([await stored(c, a1.taskId), await stored(c, a2.taskId)]).toEqual([8, 8]);
    // Token B has a bucket of its own.
    await expect(logText(c, b)).resolves.toMatchObject({ stored: 4 });
    // 0.8 s refills ~51 KiB: not yet a frame …
    clock.advance(800);
    await expect(logText(c, a1)).rejects.toMatchObject({ code: 'rate_limited' });
    // … at 1 s it is (the refusals took nothing from the bucket).
    clock.advance(200);
    await expect(logText(c, a1)).resolves.toMatchObject({ stored: 4 });
    expect(c.logs.stats.refused).toBe(3);
  });
});

describe('the free-space floor', () => {
  it('refuses log frames while free space is under max(minFreeDiskMb, the database\'s size), says why once, and takes them again by itself', async () => {
    const { c, clock, said, reading, reads, tokenA, holder } = setup({ freeBytes: 2 * GIB, dbBytes: 10 * MIB });
    const a = holder(tokenA);
    await expect(logParsed(c, a)).resolves.toMatchObject({ stored: 4 });
    expect(c.logs.refusing()).toBeNull();
    // The disk fills (something else writes): seen at the next reading, at most a second later.
    reading.freeBytes = 900 * MIB;
    await expect(logParsed(c, a)).resolves.toMatchObject({ stored: 4 });
    clock.advance(DISK_CHECK_MS);
    await expect(logText(c, a)).rejects.toMatchObject({ code: 'unavailable', message: expect.stringMatching(/only 900 MiB free .* below the 1024 MiB kept for the main database/) });
    await expect(logParsed(c, a)).rejects.toMatchObject({ code: 'unavailable' });
    expect(c.logs.refusing()).toMatchObject({ freeBytes: 900 * MIB, floorBytes: GIB, since: new Date(clock.now()).toISOString() });
    expect((await c.logs.storage()).refusing).toMatchObject({ floorBytes: GIB });
    expect(said.filter((l) => l.startsWith('error logs: Log lines are refused'))).toHaveLength(1);
    expect(await stored(c, a.taskId)).toBe(8);
    // Space comes back: taken again, said once.
    reading.freeBytes = 5 * GIB;
    clock.advance(DISK_CHECK_MS);
    await expect(logParsed(c, a)).resolves.toMatchObject({ stored: 4 });
    expect(c.logs.refusing()).toBeNull();
    expect(said.filter((l) => l.startsWith('info logs:') && l.includes('taken again'))).toHaveLength(1);
    // A main database bigger than the setting raises the floor to its size.
    reading.dbBytes = 6 * GIB;
    clock.advance(DISK_CHECK_MS);
    await expect(logParsed(c, a)).rejects.toMatchObject({ code: 'unavailable', message: expect.stringContaining('below the 6144 MiB') });
    expect(reads()).toBe(4);
  });

  it('between readings, what was taken counts: the frame that would cross the floor is refused without waiting for the next reading', async () => {
    const { c, reading, reads, tokenA, holder } = setup({ freeBytes: GIB + 100 * KIB, dbBytes: MIB });
    const a = holder(tokenA);
    await expect(logParsed(c, a)).resolves.toMatchObject({ stored: 4 }); // ~64 KiB: 36 KiB left above the floor
    reading.freeBytes = 100 * GIB; // not read again yet: the estimate decides
    await expect(logParsed(c, a)).rejects.toMatchObject({ code: 'unavailable' });
    expect(reads()).toBe(1);
  });
});
