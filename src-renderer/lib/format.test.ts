import { describe, expect, it } from 'vitest';
import { countdown, formatBytes, formatClock, formatCompact, formatCount, formatDurationS, formatRelative, prettyJson, summariseDetail } from './format';

describe('formatters', () => {
  it('formats durations in whole units', () => {
    expect(formatDurationS(0)).toBe('0 s');
    expect(formatDurationS(45)).toBe('45 s');
    expect(formatDurationS(65)).toBe('1 min 5 s');
    expect(formatDurationS(180)).toBe('3 min');
    expect(formatDurationS(7200)).toBe('2 h');
    expect(formatDurationS(7500)).toBe('2 h 5 min');
    expect(formatDurationS(3 * 86400 + 4 * 3600)).toBe('3 d 4 h');
  });

  it('formats relative times both ways', () => {
    const now = Date.parse('2026-11-30T12:00:00Z');
    expect(formatRelative('2026-11-30T12:00:00Z', now)).toBe('just now');
    expect(formatRelative('2026-11-30T11:59:48Z', now)).toBe('12 s ago');
    expect(formatRelative('2026-11-30T11:55:00Z', now)).toBe('5 min ago');
    expect(formatRelative('2026-11-30T09:00:00Z', now)).toBe('3 h ago');
    expect(formatRelative('2026-11-30T12:05:00Z', now)).toBe('in 5 min');
    expect(formatRelative(null, now)).toBe('—');
    expect(formatRelative('not a date', now)).toBe('—');
  });

  it('counts down a lock and raises urgency as it runs low (P4)', () => {
    const now = 1_000_000;
    expect(countdown(now + 3_600_000, now, 7200)).toMatchObject({ text: '1:00:00', urgency: 'ok' });
    expect(countdown(now + 1_500_000, now, 7200).urgency).toBe('soon');
    expect(countdown(now + 600_000, now, 7200).urgency).toBe('critical');
    expect(countdown(now - 4000, now, 7200)).toMatchObject({ text: 'expired 0:04 ago', urgency: 'expired' });
    // Short test windows (5 s) still read sensibly.
    expect(countdown(now + 4000, now, 5)).toMatchObject({ text: '0:04', urgency: 'ok' });
    expect(countdown(now + 2000, now, 5)).toMatchObject({ text: '0:02', urgency: 'critical' });
    expect(countdown(new Date(now + 90_000).toISOString(), now, 7200).text).toBe('1:30');
  });

  it('formats clocks, counts, sizes', () => {
    expect(formatClock(75)).toBe('1:15');
    expect(formatClock(3725)).toBe('1:02:05');
    expect(formatCount(1234567)).toBe('1,234,567');
    expect(formatCount(null)).toBe('—');
    expect(formatCompact(1500)).toBe('1.5k');
    expect(formatCompact(1_000_000)).toBe('1M');
    expect(formatBytes(2048)).toBe('2 KiB');
    expect(formatBytes(5 * 1024 * 1024)).toBe('5 MiB');
  });

  it('bounds JSON and summaries so a huge detail cannot freeze a pane', () => {
    const big = { s: 'x'.repeat(1000) };
    expect(prettyJson(big, 100).length).toBeLessThan(160);
    expect(prettyJson(big, 100)).toContain('more characters');
    expect(summariseDetail({ fence: 3, attempt: 2 })).toBe('fence=3 attempt=2');
    expect(summariseDetail({ long: 'y'.repeat(500) }).length).toBeLessThanOrEqual(140);
    expect(summariseDetail(null)).toBe('');
  });
});
