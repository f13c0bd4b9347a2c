// @vitest-environment happy-dom
import { act, cleanup, renderHook } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { VerifySpec } from '../../../src-main/common/verify';
import { useJobDoneWhen } from './use-job-done-when';

afterEach(cleanup);

const saved: VerifySpec = { checks: [{ kind: 'command', name: 'tests', command: ['npm', 'test'], timeoutS: 60 }], onFail: 'needs_human', before: true };

describe('the job editor\'s "Done when…" section', () => {
  it('starts from the saved checks and leaves the form untouched until a check is edited', () => {
    const patch = vi.fn();
    const { result } = renderHook(() => useJobDoneWhen(saved, patch));
    expect(result.current.checks.map((c) => [c.kind, c.name, c.command, c.timeoutS])).toEqual([['command', 'tests', 'npm\ntest', '60']]);
    expect(result.current).toMatchObject({ onFail: 'needs_human', before: true, spec: saved });
    expect(patch).not.toHaveBeenCalled();
  });

  it('writes each change into the form: the declaration when complete, as typed while a check is half done, none once every check is removed', () => {
    const patch = vi.fn();
    const { result } = renderHook(() => useJobDoneWhen(undefined, patch));
    act(() => result.current.add('git'));
    expect(patch).toHaveBeenLastCalledWith({ verify: { checks: [{ kind: 'git', name: 'commit' }] } });
    act(() => result.current.add('file'));
    // A file check without a path: kept as typed, so the spec's validation names what is missing.
    expect(patch).toHaveBeenLastCalledWith({ verify: { checks: [{ kind: 'git', name: 'commit' }, { kind: 'file', name: 'file', path: '' }], onFail: 'retry' } });
    const file = result.current.checks[1]!;
    act(() => result.current.change(file.key, { target: 'out/report.pdf' }));
    expect(patch).toHaveBeenLastCalledWith({ verify: { checks: [{ kind: 'git', name: 'commit' }, { kind: 'file', name: 'file', path: 'out/report.pdf' }] } });
    act(() => result.current.checks.forEach((c) => result.current.remove(c.key)));
    expect(patch).toHaveBeenLastCalledWith({ verify: undefined });
  });
});
