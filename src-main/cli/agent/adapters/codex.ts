/**
 * `--parse codex-json`: OpenAI Codex CLI's `codex exec --json …`.
 *
 * The documented stream is one JSON event per line: `thread.started {thread_id}`, `turn.started`,
 * `item.started` / `item.updated` / `item.completed {item: {id, type, …}}`, `turn.completed
 * {usage: {input_tokens, cached_input_tokens, output_tokens}}`, `turn.failed {error: {message}}`
 * and `error {message}`. Item types: `agent_message {text}`, `reasoning {text}`,
 * `command_execution {command, aggregated_output, exit_code, status}`, `file_change {changes:
 * [{path, kind}]}`, `mcp_tool_call {server, tool, status}`, `web_search {query}`, `todo_list
 * {items: [{text, completed}]}`, `error {message}`.
 *
 * Usage: each `turn.completed` is one turn's usage and is sent as an increment as it streams
 * (`estimated: true`; PROTOCOL §14), the turn being the finest grain `exec --json` reports. Cached
 * input tokens are part of `input_tokens` (not added again) and sent as `cacheReadTokens`. Codex
 * reports no cost and names no model in this stream: Gaffer prices the tokens only when the agent
 * names the model (`--model`), else token caps still apply and the cost reads 0.
 */
import { brief, capText, jsonObject, logText, num, obj, str, type AdapterDefinition, type AdapterSink, type OutputAdapter } from './types';

class CodexJson implements OutputAdapter {
  constructor(private readonly model?: string) {}

  private errorText: string | undefined;
  private lastMessage: string | undefined;
  private threadId: string | undefined;
  private turnsFailed = 0;

  line(text: string, sink: AdapterSink): boolean {
    const ev = jsonObject(text);
    const type = str(ev?.type);
    if (!ev || !type) return false;
    switch (type) {
      case 'thread.started':
        this.threadId = str(ev.thread_id);
        sink.log(`codex thread ${this.threadId ?? '?'} started`);
        return true;
      case 'turn.started':
      case 'item.updated':
        return true;
      case 'item.started': {
        const item = obj(ev.item);
        if (this.itemType(item) === 'command_execution') sink.log(`$ ${brief(item?.command, 500)}`);
        return true;
      }
      case 'item.completed':
        this.completed(obj(ev.item), sink);
        return true;
      case 'turn.completed': {
        const u = obj(ev.usage);
        const input = num(u?.input_tokens);
        const output = num(u?.output_tokens);
        const cached = num(u?.cached_input_tokens);
        if (input !== undefined || output !== undefined) {
          sink.usage({ inputTokens: input ?? 0, outputTokens: output ?? 0, ...(cached ? { cacheReadTokens: Math.min(cached, input ?? 0) } : {}), estimated: true, ...(this.model ? { model: this.model } : {}) });
        }
        sink.log(`codex turn completed: ${input ?? 0} input tokens (${num(u?.cached_input_tokens) ?? 0} cached), ${output ?? 0} output tokens`);
        return true;
      }
      case 'turn.failed': {
        this.turnsFailed++;
        const why = str(obj(ev.error)?.message) ?? (typeof ev.error === 'string' ? ev.error : undefined);
        if (why) this.errorText = why;
        sink.log(`codex turn failed: ${brief(why ?? 'no reason given', 500)}`, 'error');
        return true;
      }
      case 'error':
        if (str(ev.message)) this.errorText = str(ev.message);
        sink.log(`codex: ${brief(str(ev.message) ?? 'error', 500)}`, 'warn');
        return true;
      default:
        return false;
    }
  }

  /** `type` in current versions; `item_type` in the first releases of this format. */
  private itemType(item: Record<string, unknown> | undefined): string | undefined {
    return str(item?.type) ?? str(item?.item_type);
  }

  private completed(item: Record<string, unknown> | undefined, sink: AdapterSink): void {
    switch (this.itemType(item)) {
      case 'agent_message':
      case 'assistant_message': {
        const text = str(item?.text) ?? '';
        this.lastMessage = text;
        logText(sink, text);
        return;
      }
      case 'reasoning':
        logText(sink, str(item?.text) ?? '', 'debug');
        return;
      case 'command_execution': {
        const code = item?.exit_code;
        const failed = item?.status === 'failed' || (typeof code === 'number' && code !== 0);
        sink.log(`$ ${brief(item?.command, 300)} → ${typeof code === 'number' ? `exit ${code}` : str(item?.status) ?? 'done'}`, failed ? 'warn' : 'info');
        return;
      }
      case 'file_change': {
        const changes = Array.isArray(item?.changes) ? item.changes.map(obj).filter(Boolean) : [];
        sink.log(`files changed: ${changes.map((c) => `${str(c!.path) ?? '?'} (${str(c!.kind) ?? 'changed'})`).join(', ') || '—'}`);
        return;
      }
      case 'mcp_tool_call':
        sink.log(`tool ${str(item?.server) ?? '?'}.${str(item?.tool) ?? '?'}: ${str(item?.status) ?? 'done'}`, item?.status === 'failed' ? 'warn' : 'info');
        return;
      case 'web_search':
        sink.log(`web search: ${brief(item?.query)}`);
        return;
      case 'todo_list': {
        const items = Array.isArray(item?.items) ? item.items.map(obj) : [];
        sink.log(`plan: ${items.filter((i) => i?.completed === true).length} of ${items.length} done`);
        return;
      }
      case 'error':
        sink.log(`codex: ${brief(str(item?.message) ?? 'error', 500)}`, 'warn');
        return;
      default:
        sink.log(`codex ${this.itemType(item) ?? 'item'}: ${brief(item ?? '')}`, 'debug');
    }
  }

  result(): Record<string, unknown> | undefined {
    if (this.lastMessage === undefined && !this.threadId) return undefined;
    return {
      ...(this.lastMessage !== undefined ? { result: capText(this.lastMessage) } : {}),
      ...(this.threadId ? { threadId: this.threadId } : {}),
      ...(this.turnsFailed ? { turnsFailed: this.turnsFailed } : {}),
    };
  }

  error(): string | undefined {
    return this.errorText;
  }
}

export const codexJson: AdapterDefinition = {
  summary: 'OpenAI Codex CLI: codex exec --json … (token counts from each turn.completed)',
  create: (opts) => new CodexJson(opts?.model),
};
