import { describe, expect, it } from 'vitest';
import { capFromDraft, capWords } from './cap-draft';

describe('a spend cap typed in a form', () => {
  it('reads dollars and tokens, none as no cap, and says what is wrong', () => {
    expect(capFromDraft({ usd: '$0.50', tokens: '200,000' })).toEqual({ budget: { maxCostUsdPerRun: 0.5, maxTokensPerRun: 200000 } });
    expect(capFromDraft({ usd: ' ', tokens: '' })).toEqual({ budget: null });
    expect(capFromDraft({ usd: '-1', tokens: '' })).toEqual({ problem: expect.stringContaining('positive amount') });
    expect(capFromDraft({ usd: '', tokens: '1.5' })).toEqual({ problem: expect.stringContaining('whole number') });
    expect(capWords({ maxCostUsdPerRun: 0.5, maxTokensPerRun: 200000 })).toBe('$0.50 or 200,000 tokens per run');
    expect(capWords(null)).toBe('no cap');
  });
});
