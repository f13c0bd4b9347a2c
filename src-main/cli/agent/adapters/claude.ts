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
 * Usage is taken from the result message only: it carries the session's totals, and adding the
 * per-message usage of assistant messages as well would count tokens twice. Input tokens include
 * cache writes and cache reads (they are input the model processed). A run killed before its
 * result message reports no usage.
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

/** A message's own token counts (PROTOCOL §16 `data.usage`): what the transcript shows per message. */
function messageUsage(message: unknown): Record<string, number> | undefined {
  const u = obj(obj(message)?.usage);
  if (!u) return undefined;
  const input = (num(u.input_tokens) ?? 0) + (num(u.cache_creation_input_tokens) ?? 0) + (num(u.cache_read_input_tokens) ?? 0);
  return { inputTokens: input, outputTokens: num(u.output_tokens) ?? 0 };
}

class ClaudeStreamJson implements OutputAdapter {
  private model: string | undefined;
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
      const input = (num(usage?.input_tokens) ?? 0) + (num(usage?.cache_creation_input_tokens) ?? 0) + (num(usage?.cache_read_input_tokens) ?? 0);
      sink.usage({ inputTokens: input, outputTokens: num(usage?.output_tokens) ?? 0, ...(cost !== undefined ? { costUsd: cost } : {}), ...(model ? { model } : {}) });
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
  summary: 'Claude Code: claude -p … --output-format stream-json --verbose (usage and cost from the result message)',
  create: () => new ClaudeStreamJson(),
};
