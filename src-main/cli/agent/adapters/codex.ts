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
 *
 * PROTOCOL §16: commands and MCP calls become `tool_call` / `tool_result` lines (with the output
 * and exit code), messages `assistant`, each turn's usage a `result`, failures `error`; the
 * `thread_id` is the session `codex exec resume` continues.
 */
import { brief, capData, capText, dataOf, jsonObject, logText, num, obj, str, type AdapterDefinition, type AdapterSink, type OutputAdapter } from './types';

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
        if (this.threadId) sink.session('codex', this.threadId);
        sink.log(`codex thread ${this.threadId ?? '?'} started`, undefined, { kind: 'system', data: dataOf({ cli: 'codex', sessionId: this.threadId }) });
        return true;
      case 'turn.started':
      case 'item.updated':
        return true;
      case 'item.started': {
        const item = obj(ev.item);
        if (this.itemType(item) === 'command_execution') {
          sink.log(`$ ${brief(item?.command, 500)}`, undefined, { kind: 'tool_call', data: dataOf({ id: str(item?.id), name: 'shell', input: { command: capData(item?.command) } }) });
        } else if (this.itemType(item) === 'mcp_tool_call') {
          const name = `${str(item?.server) ?? '?'}.${str(item?.tool) ?? '?'}`;
          sink.log(`tool ${name}: ${brief(item?.arguments ?? '')}`, undefined, { kind: 'tool_call', data: dataOf({ id: str(item?.id), name, input: capData(item?.arguments) }) });
        }
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
        sink.log(`codex turn completed: ${input ?? 0} input tokens (${cached ?? 0} cached), ${output ?? 0} output tokens`, undefined, {
          kind: 'result',
          data: { isError: false, usage: dataOf({ inputTokens: input ?? 0, outputTokens: output ?? 0, cachedInputTokens: cached }) },
        });
        return true;
      }
      case 'turn.failed': {
        this.turnsFailed++;
        const why = str(obj(ev.error)?.message) ?? (typeof ev.error === 'string' ? ev.error : undefined);
        if (why) this.errorText = why;
        sink.log(`codex turn failed: ${brief(why ?? 'no reason given', 500)}`, 'error', { kind: 'error', data: dataOf({ message: why }) });
        return true;
      }
      case 'error':
        if (str(ev.message)) this.errorText = str(ev.message);
        sink.log(`codex: ${brief(str(ev.message) ?? 'error', 500)}`, 'warn', { kind: 'error', data: dataOf({ message: str(ev.message) }) });
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
        logText(sink, text, undefined, { kind: 'assistant', data: {} });
        return;
      }
      case 'reasoning':
        logText(sink, str(item?.text) ?? '', 'debug', { kind: 'assistant', data: { thinking: true } });
        return;
      case 'command_execution': {
        const code = item?.exit_code;
        const failed = item?.status === 'failed' || (typeof code === 'number' && code !== 0);
        sink.log(`$ ${brief(item?.command, 300)} → ${typeof code === 'number' ? `exit ${code}` : str(item?.status) ?? 'done'}`, failed ? 'warn' : 'info', {
          kind: 'tool_result',
          data: dataOf({ id: str(item?.id), name: 'shell', output: capData(str(item?.aggregated_output) ?? ''), exitCode: typeof code === 'number' ? code : undefined, isError: failed }),
        });
        return;
      }
      case 'file_change': {
        const changes = Array.isArray(item?.changes) ? item.changes.map(obj).filter(Boolean) : [];
        sink.log(`files changed: ${changes.map((c) => `${str(c!.path) ?? '?'} (${str(c!.kind) ?? 'changed'})`).join(', ') || '—'}`, undefined, {
          kind: 'tool_result',
          data: dataOf({ id: str(item?.id), name: 'file_change', input: capData({ changes }), isError: item?.status === 'failed' }),
        });
        return;
      }
      case 'mcp_tool_call':
        sink.log(`tool ${str(item?.server) ?? '?'}.${str(item?.tool) ?? '?'}: ${str(item?.status) ?? 'done'}`, item?.status === 'failed' ? 'warn' : 'info', {
          kind: 'tool_result',
          data: dataOf({ id: str(item?.id), name: `${str(item?.server) ?? '?'}.${str(item?.tool) ?? '?'}`, output: capData(item?.result ?? item?.error), isError: item?.status === 'failed' }),
        });
        return;
      case 'web_search':
        sink.log(`web search: ${brief(item?.query)}`, undefined, { kind: 'tool_result', data: dataOf({ id: str(item?.id), name: 'web_search', input: { query: capData(item?.query) }, isError: false }) });
        return;
      case 'todo_list': {
        const items = Array.isArray(item?.items) ? item.items.map(obj) : [];
        sink.log(`plan: ${items.filter((i) => i?.completed === true).length} of ${items.length} done`, undefined, { kind: 'system', data: { plan: capData(items) } });
        return;
      }
      case 'error':
        sink.log(`codex: ${brief(str(item?.message) ?? 'error', 500)}`, 'warn', { kind: 'error', data: dataOf({ message: str(item?.message) }) });
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
