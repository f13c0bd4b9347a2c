/**
 * The console served to a browser by the headless server. Placeholder until the console
 * transport lands: serves nothing, so `/` answers 404.
 */
import type { Core } from '../core/create-core';
import type { ServerExtension } from '../server/server';

export interface ConsoleHostOptions {
  operatorToken: string;
  dataDir: string;
}

export function consoleExtensions(_core: Core, _opts: ConsoleHostOptions): Array<(port: number) => ServerExtension> {
  return [];
}
