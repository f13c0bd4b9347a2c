import { describe, expect, it } from 'vitest';
import { tokenFromPaste } from './SignIn';

describe('pasting the operator token', () => {
  it('takes the token itself, or the one in a pasted console URL', () => {
    expect(tokenFromPaste('  gfo_abc123  ')).toBe('gfo_abc123');
    expect(tokenFromPaste('http://127.0.0.1:7311/#token=gfo_abc%2B123')).toBe('gfo_abc+123');
    expect(tokenFromPaste('http://127.0.0.1:7311/#/audit?x=1&token=gfo_z')).toBe('gfo_z');
    expect(tokenFromPaste('   ')).toBe('');
  });
});
