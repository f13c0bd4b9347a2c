/** The output adapters `--parse FORMAT` can name. Adding one is a file and a line here. */
import { claudeStreamJson } from './claude';
import { codexJson } from './codex';
import { geminiStreamJson } from './gemini';
import type { AdapterDefinition } from './types';

export const ADAPTERS: Record<string, AdapterDefinition> = {
  'claude-stream-json': claudeStreamJson,
  'codex-json': codexJson,
  'gemini-stream-json': geminiStreamJson,
};

export type { AdapterDefinition, AdapterSink, LineExtra, OutputAdapter } from './types';
