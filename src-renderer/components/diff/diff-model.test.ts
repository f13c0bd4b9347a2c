// @vitest-environment happy-dom
import { render } from '@testing-library/react';
import { createElement } from 'react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeWords, diffRows, languageOf } from './diff-model';
import { WorkspaceSection } from './WorkspaceSection';

const DIFF = [
  'diff --git a/src/a.ts b/src/a.ts',
  'index 1111111..2222222 100644',
  '--- a/src/a.ts',
  '+++ b/src/a.ts',
  '@@ -1,2 +1,3 @@',
  ' const a = 1;',
  '-const b = "<b>";',
  '+const b = "<img src=x onerror=alert(1)>";',
  '+const c = 3;',
  'diff --git a/notes.md b/notes.md',
  'new file mode 100644',
  'index 0000000..3333333',
  '--- /dev/null',
  '+++ b/notes.md',
  '@@ -0,0 +1 @@',
  '+# hi',
  '',
].join('\n');

describe('the diff model', () => {
  it('files with their figures and language, rows with old and new line numbers', () => {
    const { files, rows } = diffRows(DIFF);
    expect(files).toEqual([
      { path: 'src/a.ts', insertions: 2, deletions: 1, row: 0, language: 'typescript' },
      { path: 'notes.md', insertions: 1, deletions: 0, row: 6, language: 'markdown' },
    ]);
    expect(rows.slice(0, 6).map((r) => [r.kind, r.oldNo ?? null, r.newNo ?? null])).toEqual([
      ['file', null, null],
      ['hunk', null, null],
      ['ctx', 1, 1],
      ['del', 2, null],
      ['add', null, 2],
      ['add', null, 3],
    ]);
    expect(rows[6]!.text).toBe('notes.md (new)');
    expect(diffRows('').rows).toEqual([]);
    expect(languageOf('Dockerfile')).toBe('dockerfile');
    expect(languageOf('x.unknown')).toBeUndefined();
  });

  it('says "+12 −3 in 2 files"', () => {
    expect(changeWords({ insertions: 12, deletions: 3, filesChanged: 2 })).toBe('+12 −3 in 2 files');
    expect(changeWords({ insertions: 1, deletions: 0, filesChanged: 1 })).toBe('+1 −0 in 1 file');
    expect(changeWords({ insertions: 0, deletions: 0, filesChanged: 0 })).toBe('no changes');
  });
});

describe('the workspace section', () => {
  // happy-dom lays nothing out: give elements the size a pane has, so the virtualiser draws rows.
  const saved = ['clientHeight', 'clientWidth'].map((k) => [k, Object.getOwnPropertyDescriptor(HTMLElement.prototype, k)] as const);
  beforeAll(() => {
    Object.defineProperty(HTMLElement.prototype, 'clientHeight', { configurable: true, get: () => 360 });
    Object.defineProperty(HTMLElement.prototype, 'clientWidth', { configurable: true, get: () => 800 });
  });
  afterAll(() => {
    for (const [k, d] of saved) {
      if (d) Object.defineProperty(HTMLElement.prototype, k, d);
      else delete (HTMLElement.prototype as unknown as Record<string, unknown>)[k];
    }
  });

  const workspace = { attempt: 1, kind: 'workspace' as const, name: 'workspace', at: '2026-12-05T10:00:00.000Z', data: { branch: 'gaffer/task-3', commits: 2, filesChanged: 2, insertions: 3, deletions: 1 } };

  it('shows the branch and figures, a link, and the diff coloured without rendering the diff\'s HTML', () => {
    const link = { attempt: 1, kind: 'link' as const, name: 'pull request', at: workspace.at, data: { url: 'https://example.invalid/pr/7' } };
    const view = render(createElement(WorkspaceSection, { items: [workspace, link], shown: 1, diff: { attempt: 1, diff: DIFF }, error: null, showAttempt: () => {} }));
    expect(view.getByText('gaffer/task-3')).toBeTruthy();
    expect(view.container.textContent).toContain('2 commits, +3 −1 in 2 files');
    expect(view.getByRole('link', { name: 'pull request' }).getAttribute('href')).toBe('https://example.invalid/pr/7');
    expect(view.getByRole('list', { name: 'Changed files' }).textContent).toContain('src/a.ts');
    expect(view.container.querySelector('img')).toBeNull(); // the diff's text is text
    expect(view.container.querySelector('.hljs-keyword')).not.toBeNull(); // coloured by highlight.js
  });

  it('a large diff is virtualised: only some of its rows are in the page', () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => `+line ${i}`);
    const big = ['--- a/big.txt', '+++ b/big.txt', `@@ -0,0 +1,${lines.length} @@`, ...lines, ''].join('\n');
    const view = render(createElement(WorkspaceSection, { items: [workspace], shown: 1, diff: { attempt: 1, diff: big }, error: null, showAttempt: () => {} }));
    const drawn = view.container.querySelectorAll('.diff-row').length;
    expect(drawn).toBeGreaterThan(0);
    expect(drawn).toBeLessThan(500);
  });

  it('renders nothing for work that produced nothing', () => {
    const view = render(createElement(WorkspaceSection, { items: [], shown: null, diff: null, error: null, showAttempt: () => {} }));
    expect(view.container.innerHTML).toBe('');
  });
});
