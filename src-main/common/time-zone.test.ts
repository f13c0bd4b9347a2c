import { describe, expect, it } from 'vitest';
import { budgetsInput, quietHoursInput } from './attention';
import { canonicalZone } from './time-zone';

describe('canonicalZone', () => {
  it('spells a zone the way IANA does; a name that is no zone is undefined', () => {
    expect(canonicalZone('europe/berlin')).toBe('Europe/Berlin');
    expect(canonicalZone('AMERICA/NEW_YORK')).toBe('America/New_York');
    expect(canonicalZone('Europe/Berlin')).toBe('Europe/Berlin');
    expect(canonicalZone('utc')).toBe('UTC');
    expect(canonicalZone('etc/gmt+5')).toBe('Etc/GMT+5');
    expect(canonicalZone('europe/nowhere')).toBeUndefined();
  });

  it('keeps a link spelled as IANA spells it; a lower-case link becomes the zone it names', () => {
    expect(canonicalZone('Asia/Kolkata')).toBe('Asia/Kolkata');
    expect(canonicalZone('US/Eastern')).toBe('US/Eastern');
    expect(canonicalZone('us/eastern')).toBe('America/New_York');
  });

  it('the operator zones of quiet hours and spend caps are stored canonical too', () => {
    expect(quietHoursInput.parse({ start: '22:00', end: '07:00', timezone: 'europe/berlin' }).timezone).toBe('Europe/Berlin');
    expect(budgetsInput.parse({ timezone: 'asia/tokyo' }).timezone).toBe('Asia/Tokyo');
    expect(budgetsInput.safeParse({ timezone: 'asia/nowhere' }).success).toBe(false);
  });
});
