import { describe, expect, it } from 'vitest';
import { controlPrefix, describeProgress, looksLikeControl, newControlToken, parseControlBody } from './control-lines';
import { cutText, LineSplitter, OutputBudget } from './lines';

describe('LineSplitter', () => {
  it('splits on \\n and \\r\\n, keeps a last unterminated line, and decodes UTF-8 split across chunks', () => {
    const lines: string[] = [];
    const s = new LineSplitter((l) => lines.push(l));
    const euro = Buffer.from('€'); // 3 bytes
    s.push(Buffer.concat([Buffer.from('a\r\nb'), euro.subarray(0, 1)]));
    s.push(Buffer.concat([euro.subarray(1), Buffer.from('\n\nlast')]));
    s.end();
    expect(lines).toEqual(['a', 'b€', '', 'last']);
  });

  it('cuts an endless line at the limit, marks it, and drops the rest of it', () => {
    const lines: string[] = [];
    const s = new LineSplitter((l) => lines.push(l), 10);
    s.push('0123456789abcdef');
    s.push('more of the same line');
    s.push(' still\nnext\n');
    s.end();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^0123456789 … \[line cut at 10 characters\]$/);
    expect(lines[1]).toBe('next');
  });
});

describe('OutputBudget', () => {
  it('keeps lines up to the line limit, then one notice, then drops', () => {
    const b = new OutputBudget({ maxLines: 2, maxBytes: 1000 });
    expect(b.admit('one').verdict).toBe('keep');
    expect(b.admit('two').verdict).toBe('keep');
    const third = b.admit('three');
    expect(third.verdict).toBe('notice');
    expect(third.verdict === 'notice' && third.text).toMatch(/output truncated/);
    expect(b.admit('four').verdict).toBe('drop');
    expect(b.truncated).toBe(true);
    expect(b.dropped).toBe(2);
  });

  it('counts bytes (UTF-8 plus the newline)', () => {
    const b = new OutputBudget({ maxLines: 100, maxBytes: 9 });
    expect(b.admit('€€').verdict).toBe('keep'); // 6 + 1
    expect(b.admit('x').verdict).toBe('keep'); // 9
    expect(b.admit('').verdict).toBe('notice'); // 10 > 9
  });
});

describe('control lines', () => {
  const parse = (json: string) => parseControlBody(` ${json}`);

  it('an attempt\'s lines start with its own token; anything else that looks like one is text', () => {
    const token = newControlToken();
    const prefix = controlPrefix(token);
    expect(prefix).toBe(`::gaffer:${token}::`);
    expect(newControlToken()).not.toBe(token);
    expect(looksLikeControl(`${prefix} {"log":"x"}`, prefix)).toBe(false);
    for (const forged of ['::gaffer:: {"usage":{"costUsd":1}}', `::gaffer:${newControlToken()}:: {}`, '::gaffer:x {}']) expect(looksLikeControl(forged, prefix)).toBe(true);
    expect(looksLikeControl('plain text ::gaffer::', prefix)).toBe(false);
  });

  it('reads steps, usage, progress and log lines, several in one object', () => {
    expect(parse('{"step":"uploaded","ref":"s3://b/k"}')).toEqual({ ok: true, message: { step: { name: 'uploaded', ref: 's3://b/k' } } });
    expect(parse('{"usage":{"inputTokens":10.4,"outputTokens":3,"costUsd":0.5,"model":"m"}}')).toEqual({
      ok: true,
      message: { usage: { inputTokens: 10, outputTokens: 3, costUsd: 0.5, model: 'm' } },
    });
    const p = parse('{"progress":{"done":4,"total":10},"message":"files","step":"a"}');
    expect(p).toEqual({ ok: true, message: { step: { name: 'a' }, progress: { done: 4, total: 10, message: 'files' } } });
    expect(p.ok && describeProgress(p.message.progress!)).toBe('progress 4 of 10 — files');
    expect(parse('{"progress":0.25}')).toMatchObject({ ok: true, message: { progress: { fraction: 0.25 } } });
    expect(parse('{"log":"slow","level":"warn","future":1}')).toEqual({ ok: true, message: { log: { text: 'slow', level: 'warn' } } });
    expect(parse('{"log":"x","level":"loud"}')).toMatchObject({ ok: true, message: { log: { level: 'info' } } });
  });

  it('reads link and file artifacts (PROTOCOL §15), named or named after what they point at', () => {
    expect(parse('{"link":"https://github.com/o/r/pull/7","name":"pull request"}')).toEqual({
      ok: true,
      message: { artifact: { kind: 'link', name: 'pull request', data: { url: 'https://github.com/o/r/pull/7' } } },
    });
    expect(parse('{"file":"/srv/out/report.pdf"}')).toEqual({ ok: true, message: { artifact: { kind: 'file', name: '/srv/out/report.pdf', data: { path: '/srv/out/report.pdf' } } } });
    expect(parse('{"link":"javascript:alert(1)"}')).toMatchObject({ ok: false, reason: /http\(s\) URL/ });
    expect(parse('{"file":""}')).toMatchObject({ ok: false, reason: /"file"/ });
    expect(parse('{"link":"https://x.invalid","name":""}')).toMatchObject({ ok: false, reason: /"name"/ });
  });

  it('refuses what it cannot use, saying why', () => {
    expect(parse('not json')).toEqual({ ok: false, reason: 'not valid JSON after the ::gaffer:…:: prefix' });
    expect(parse('[1]')).toMatchObject({ ok: false, reason: /JSON object/ });
    expect(parse('{"step":""}')).toMatchObject({ ok: false, reason: /"step"/ });
    expect(parse(`{"step":"${'x'.repeat(201)}"}`)).toMatchObject({ ok: false, reason: /"step"/ });
    expect(parse('{"usage":{"inputTokens":-1}}')).toMatchObject({ ok: false, reason: /"usage"/ });
    expect(parse('{"progress":7}')).toMatchObject({ ok: false, reason: /"progress"/ });
    expect(parse('{"other":1}')).toMatchObject({ ok: false, reason: /none of/ });
  });
});

describe('cutText', () => {
  it('never splits a surrogate pair, and marks what it cut', () => {
    const s = `x${'\u{1F600}'.repeat(5)}`; // x + 5 emoji = 11 UTF-16 units
    expect(cutText(s, 20)).toBe(s);
    expect(cutText(s, 4)).toBe(`x\u{1F600}`); // 4 would end inside the second emoji
    expect(cutText(s, 5, '…')).toBe(`x\u{1F600}…`);
    expect(cutText(s, 6, '…')).toBe(`x\u{1F600}\u{1F600}…`);
  });
});
