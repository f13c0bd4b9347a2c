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
import { brief, capData, capText, dataOf, jsonObject, logText, num, obj, str, type AdapterDefinition, type AdapterSink, type OutputAdapter } from './types';

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

/** A message's own token counts (PROTOCOL §16 `data.usage`): what the transcript shows per message. */
function messageUsage(message: unknown): Record<string, number> | undefined {
  const u = obj(obj(message)?.usage);
  if (!u) return undefined;
  const input = (num(u.input_tokens) ?? 0) + (num(u.cache_creation_input_tokens) ?? 0) + (num(u.cache_read_input_tokens) ?? 0);
  return { inputTokens: input, outputTokens: num(u.output_tokens) ?? 0 };
}

class ClaudeStreamJson implements OutputAdapter {
  private model: string | undefined;
  /** Per message id, the tokens already sent (insertion order: the oldest is dropped first). */
  private readonly sent = new Map<string, MessageTokens>();
  private final: Record<string, unknown> | undefined;
  private errorText: string | undefined;
  private sessionId: string | undefined;
  /** tool_use id → tool name, so a result names its tool. */
  private readonly tools = new Map<string, string>();

  line(text: string, sink: AdapterSink): boolean {
    const ev = jsonObject(text);
    const type = str(ev?.type);
    if (!ev || !type) return false;
    switch (type) {
      case 'system':
        if (ev.subtype === 'init') {
          this.model = str(ev.model);
          this.noteSession(str(ev.session_id), sink);
          sink.log(`claude session ${str(ev.session_id) ?? '?'} started${this.model ? ` (model ${this.model})` : ''}`, undefined, {
            kind: 'system',
            data: dataOf({ cli: 'claude', sessionId: str(ev.session_id), model: this.model, cwd: str(ev.cwd) }),
          });
        }
        return true;
      case 'assistant':
        this.onMessageUsage(obj(ev.message), sink);
        this.assistant(ev.message, sink);
        return true;
      case 'user':
        for (const b of contentBlocks(ev.message)) {
          if (b.type !== 'tool_result') continue;
          const id = str(b.tool_use_id);
          const name = id ? this.tools.get(id) : undefined;
          const output = toolResultText(b.content);
          const isError = b.is_error === true;
          const data = dataOf({ id, name, output: capData(output), isError });
          if (isError) sink.log(`tool failed: ${brief(output)}`, 'warn', { kind: 'tool_result', data });
          else sink.log(`tool ${name ?? 'result'} done: ${brief(output)}`, undefined, { kind: 'tool_result', data });
        }
        return true;
      case 'result':
        this.noteSession(str(ev.session_id), sink);
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

  private noteSession(id: string | undefined, sink: AdapterSink): void {
    if (!id || id === this.sessionId) return;
    this.sessionId = id;
    sink.session('claude', id);
  }

  /** One assistant message: its usage goes on its first line (text, thinking or tool call). */
  private assistant(message: unknown, sink: AdapterSink): void {
    const model = str(obj(message)?.model) ?? this.model;
    let head: Record<string, unknown> | undefined = dataOf({ model, usage: messageUsage(message) });
    const take = () => {
      const h = head ?? {};
      head = undefined;
      return h;
    };
    for (const b of contentBlocks(message)) {
      if (b.type === 'text' && typeof b.text === 'string' && b.text.trim()) logText(sink, b.text, undefined, { kind: 'assistant', data: take() });
      else if (b.type === 'thinking' && typeof b.thinking === 'string' && b.thinking.trim()) logText(sink, b.thinking, 'debug', { kind: 'assistant', data: { ...take(), thinking: true } });
      else if (b.type === 'tool_use') {
        const id = str(b.id);
        const name = str(b.name) ?? '?';
        if (id) this.tools.set(id, name);
        sink.log(`tool ${name}: ${toolInput(b.input)}`, undefined, { kind: 'tool_call', data: { ...take(), ...dataOf({ id, name, input: capData(b.input) }) } });
      }
    }
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
      {
        kind: 'result',
        data: dataOf({
          isError,
          subtype: str(ev.subtype),
          numTurns: turns,
          costUsd: cost,
          durationMs: num(ev.duration_ms),
          usage: messageUsage(ev),
          model,
          result: typeof ev.result === 'string' ? capText(ev.result) : undefined,
          errors: errors.length ? errors : undefined,
        }),
      },
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
