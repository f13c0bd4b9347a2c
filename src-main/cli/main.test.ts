import { describe, expect, it, vi } from 'vitest';
import { main, SUBCOMMANDS, usage } from './main';

describe('gaffer command', () => {
  it('--help lists every subcommand with its summary and exits 0', async () => {
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(await main(['--help'])).toBe(0);
      const text = out.mock.calls.map((c) => String(c[0])).join('');
      // Names are padded to the longest one, so a shorter name is followed by more spaces.
      for (const [name, c] of Object.entries(SUBCOMMANDS)) expect(text.split('\n')).toContainEqual(expect.stringMatching(new RegExp(`^  ${name} +${c.summary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`)));
    } finally {
      out.mockRestore();
    }
  });

  it('an unknown subcommand is refused with the usage and exit status 2', async () => {
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await main(['frobnicate'])).toBe(2);
      expect(String(err.mock.calls[0]?.[0])).toContain('unknown command "frobnicate"');
      expect(String(err.mock.calls[0]?.[0])).toContain(usage());
    } finally {
      err.mockRestore();
    }
  });
});
