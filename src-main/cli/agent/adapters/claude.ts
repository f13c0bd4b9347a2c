/**
 * `--parse claude-stream-json`: Claude Code's `claude -p … --output-format stream-json --verbose`.
 *
 * The documented stream is one JSON object per line:
 * - `{"type":"system","subtype":"init","session_id","model",…}` first;
 * - `{"type":"assistant","message":{"content":[{type:"text",text} | {type:"tool_use",name,input} | …],"usage":…}}`;
 * - `{"type":"user","message":{"content":[{type:"tool_result",content,is_error}]}}` (tool results);
 * - last, `{"type":"result","subtype":"success"|"error_…","is_error","result","num_turns",
 *   "total_cost_usd","usage":{input_tokens,output_tokens,cache_creation_input_tokens,cache_read_input_tokens},"modelUsage":{…}}`.
 *
 * Usage is sent as it streams (PROTOCOL §14): each assistant message's `usage` is an increment
 * (`estimated: true`, with its model; Gaffer prices it from its price table), so a cap can stop
 * the run while it spends. Claude Code may print one API message as several assistant lines (one
 * per content block) that share `message.id` and repeat its usage: per id only what grew since
 * the last line is sent, never the same tokens twice. The result message carries the session's
 * totals and the CLI's own cost: it is sent as `final: true` and replaces the running estimate.
 * Input tokens include cache writes and reads (input the model processed), also sent apart as
 * `cacheWriteTokens` / `cacheReadTokens` (priced at their own rates).
 */
import { brief, capText, jsonObject, logText, num, obj, str, type AdapterDefinition, type AdapterSink, type OutputAdapter } from './types';

function contentBlocks(message: unknown): Array<Record<string, unknown>> {
  const content = obj(message)?.content;
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? content.map(obj).filter((b): b is Record<string, unknown> => !!b) : [];
}

/** The interesting part of a tool's input: the command, the file, or the whole input in brief. */
function toolInput(input: unknown): string {
  const i = obj(input);
  const key = i && ['command', 'file_path', 'path', 'pattern', 'url', 'query', 'description'].find((k) => typeof i[k] === 'string');
  return key ? brief(i![key]) : brief(input ?? '');
}

function toolResultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((c) => str(obj(c)?.text) ?? '').join(' ');
  return brief(content ?? '');
}

interface MessageTokens {
  input: number;
  output: number;
  read: number;
  write: number;
}

/** A message's (or the session's) usage object as tokens; input includes the cache. */
function tokensOf(usage: Record<string, unknown>): MessageTokens {
  const read = num(usage.cache_read_input_tokens) ?? 0;
  const write = num(usage.cache_creation_input_tokens) ?? 0;
  return { input: (num(usage.input_tokens) ?? 0) + read + write, output: num(usage.output_tokens) ?? 0, read, write };
}

/** Messages remembered for the per-id difference; older ones are not repeated by the CLI. */
const REMEMBERED_MESSAGES = 64;

class ClaudeStreamJson implements OutputAdapter {
  private model: string | undefined;
  /** Per message id, the tokens already sent (insertion order: the oldest is dropped first). */
  private readonly sent = new Map<string, MessageTokens>();
  private final: Record<string, unknown> | undefined;
  private errorText: string | undefined;

  line(text: string, sink: AdapterSink): boolean {
    const ev = jsonObject(text);
    const type = str(ev?.type);
    if (!ev || !type) return false;
    switch (type) {
      case 'system':
        if (ev.subtype === 'init') {
          this.model = str(ev.model);
          sink.log(`claude session ${str(ev.session_id) ?? '?'} started${this.model ? ` (model ${this.model})` : ''}`);
        }
        return true;
      case 'assistant':
        this.onMessageUsage(obj(ev.message), sink);
        for (const b of contentBlocks(ev.message)) {
          if (b.type === 'text' && typeof b.text === 'string') logText(sink, b.text);
          else if (b.type === 'tool_use') sink.log(`tool ${str(b.name) ?? '?'}: ${toolInput(b.input)}`);
        }
        return true;
      case 'user':
        for (const b of contentBlocks(ev.message)) {
          if (b.type === 'tool_result' && b.is_error === true) sink.log(`tool failed: ${brief(toolResultText(b.content))}`, 'warn');
        }
        return true;
      case 'result':
        this.onResult(ev, sink);
        return true;
      case 'stream_event':
        return true; // partial-message deltas (--include-partial-messages): the full message follows
      default:
        return false;
    }
  }

  /** One assistant line's usage: what grew since this message's last line, as an estimated increment. */
  private onMessageUsage(message: Record<string, unknown> | undefined, sink: AdapterSink): void {
    const usage = obj(message?.usage);
    if (!usage) return;
    const now = tokensOf(usage);
    const id = str(message?.id);
    const before = (id && this.sent.get(id)) || { input: 0, output: 0, read: 0, write: 0 };
    const grew = (k: keyof MessageTokens) => Math.max(0, now[k] - before[k]);
    const inc = { input: grew('input'), output: grew('output'), read: grew('read'), write: grew('write') };
    if (id) {
      this.sent.delete(id);
      this.sent.set(id, { input: Math.max(now.input, before.input), output: Math.max(now.output, before.output), read: Math.max(now.read, before.read), write: Math.max(now.write, before.write) });
      if (this.sent.size > REMEMBERED_MESSAGES) this.sent.delete(this.sent.keys().next().value!);
    }
    if (inc.input + inc.output === 0) return;
    const model = str(message?.model) ?? this.model;
    sink.usage({
      inputTokens: inc.input,
      outputTokens: inc.output,
      ...(inc.read ? { cacheReadTokens: inc.read } : {}),
      ...(inc.write ? { cacheWriteTokens: inc.write } : {}),
      estimated: true,
      ...(model ? { model } : {}),
    });
  }

  private onResult(ev: Record<string, unknown>, sink: AdapterSink): void {
    const usage = obj(ev.usage);
    const models = Object.keys(obj(ev.modelUsage) ?? {});
    const model = models.length === 1 ? models[0] : this.model;
    const cost = num(ev.total_cost_usd);
    if (usage || cost !== undefined) {
      // The session's totals and the CLI's own cost: they replace the running estimate (final).
      const t = tokensOf(usage ?? {});
      sink.usage({
        inputTokens: t.input,
        outputTokens: t.output,
        cacheReadTokens: t.read,
        cacheWriteTokens: t.write,
        ...(cost !== undefined ? { costUsd: cost } : { estimated: true }),
        final: true,
        ...(model ? { model } : {}),
      });
    }
    const isError = ev.is_error === true || (typeof ev.subtype === 'string' && ev.subtype.startsWith('error'));
    const turns = num(ev.num_turns);
    const errors = Array.isArray(ev.errors) ? ev.errors.filter((e): e is string => typeof e === 'string') : [];
    sink.log(
      `claude finished: ${str(ev.subtype) ?? (isError ? 'error' : 'success')}${turns !== undefined ? ` after ${turns} turns` : ''}${cost !== undefined ? `, $${cost}` : ''}${errors.length ? ` — ${brief(errors.join('; '))}` : ''}`,
      isError ? 'error' : 'info',
    );
    if (isError) {
      const words = [typeof ev.result === 'string' ? ev.result.trim() : '', ...errors].filter(Boolean).join('; ');
      this.errorText = words || `claude ended with ${str(ev.subtype) ?? 'an error'}`;
    }
    this.final = {
      ...(typeof ev.result === 'string' ? { result: capText(ev.result) } : {}),
      ...(str(ev.subtype) ? { subtype: ev.subtype } : {}),
      isError,
      ...(str(ev.session_id) ? { sessionId: ev.session_id } : {}),
      ...(turns !== undefined ? { numTurns: turns } : {}),
    };
  }

  result(): Record<string, unknown> | undefined {
    return this.final;
  }

  error(): string | undefined {
    return this.errorText;
  }
}

export const claudeStreamJson: AdapterDefinition = {
  summary: "Claude Code: claude -p … --output-format stream-json --verbose (usage per message as it streams; the CLI's own cost from the result message)",
  create: () => new ClaudeStreamJson(),
};
