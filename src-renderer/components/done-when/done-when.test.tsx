// @vitest-environment happy-dom
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { DoneWhenSection } from './DoneWhenSection';
import { newCheck, readDoneWhen, useDoneWhen } from './use-done-when';

afterEach(cleanup);

describe('readDoneWhen', () => {
  it('no checks: no declaration and nothing to fix', () => {
    expect(readDoneWhen([], 'retry', false)).toEqual({ spec: undefined, problems: [], preview: null });
  });

  it('makes the declaration and its plain-word preview', () => {
    const tests = { ...newCheck('command'), command: 'npm\ntest' };
    const commit = newCheck('git');
    const r = readDoneWhen([tests, commit], 'needs_human', true);
    expect(r.spec).toEqual({ checks: [{ kind: 'command', name: 'tests', command: ['npm', 'test'] }, { kind: 'git', name: 'commit' }], onFail: 'needs_human', before: true });
    expect(r.preview).toBe('done when `npm test` passes in the workspace and the branch has a commit; otherwise it waits for you. A later attempt first checks whether the work is already done.');
  });

  it('names what is missing, per check', () => {
    const r = readDoneWhen([newCheck('command'), { ...newCheck('output'), name: 'shape', schema: '{not json' }], 'retry', false);
    expect(r.spec).toBeUndefined();
    expect(r.problems).toEqual(['check 1 (“tests”): a command check needs a program to run', 'check 2 (“shape”): the schema must be a JSON object']);
  });
});

function Harness() {
  const state = useDoneWhen();
  return <DoneWhenSection state={state} />;
}

describe('DoneWhenSection', () => {
  it('adds a check by kind and previews it in words', () => {
    render(<Harness />);
    fireEvent.change(screen.getByLabelText('Kind of check to add'), { target: { value: 'file' } });
    act(() => screen.getByTestId('done-when-add').click());
    expect(screen.getByTestId('done-when-problem').textContent).toContain('check 1');
    fireEvent.change(screen.getByPlaceholderText('out/report.md'), { target: { value: 'out/report.md' } });
    expect(screen.getByTestId('done-when-preview').textContent).toBe('Done when out/report.md exists; otherwise it is tried again, told what failed.');
    act(() => screen.getByRole('button', { name: 'Remove check 1' }).click());
    expect(screen.queryByTestId('done-when-check')).toBeNull();
  });
});
