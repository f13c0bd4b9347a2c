/**
 * ConsoleApi in the Electron shell: a thin wrapper over the bridge the sandboxed preload exposes
 * as `window.gaffer` (allow-listed IPC). Replies cross IPC as `ConsoleReply`; here they become
 * values or `ConsoleCallError`s again. IPC has no connection to lose, so `onConnectionChange`
 * never fires. Pure browser code: no Node or Electron imports.
 */
import {
  ConsoleCallError,
  type ConsoleApi,
  type ConsoleArgs,
  type ConsoleMethod,
  type ConsoleReply,
  type ConsoleResult,
  type GafferBridge,
} from '../../src-main/common/console-api';

function unwrap<T>(reply: ConsoleReply<unknown> | undefined): T {
  if (reply && reply.ok) return reply.value as T;
  throw new ConsoleCallError(reply && !reply.ok ? reply.error : { code: 'internal', status: 500, message: 'no reply from the Gaffer main process' });
}

export function createElectronConsoleApi(bridge: GafferBridge): ConsoleApi {
  return {
    shell: 'electron',
    async call<M extends ConsoleMethod>(method: M, args: ConsoleArgs<M>): Promise<ConsoleResult<M>> {
      return unwrap<ConsoleResult<M>>(await bridge.call(method, args ?? {}));
    },
    subscribe: (listener) => bridge.subscribe(listener),
    async exportAudit(args, onProgress) {
      return unwrap<{ file: string; rows: number } | null>(await bridge.exportAudit(args, onProgress));
    },
    onConnectionChange: () => () => {},
    onNavigate: (listener) => bridge.onNavigate(listener),
  };
}
