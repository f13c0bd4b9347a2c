import { describe, expect, it, vi } from 'vitest';
import { main, SUBCOMMANDS, usage } from './main';

describe('gaffer command', () => {
  it('--help lists every subcommand with its summary and exits 0', async () => {
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(await main(['--help'])).toBe(0);
      const text = out.mock.calls.map((c) => String(c[0])).join('');
      for (const [name, c] of Object.entries(SUBCOMMANDS)) expect(text).toContain(`${name}  ${c.summary}`);
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
