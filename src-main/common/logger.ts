export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

export const consoleLogger: Logger = {
  info: (m, f) => console.log(`[gaffer] ${m}`, f ?? ''),
  warn: (m, f) => console.warn(`[gaffer] ${m}`, f ?? ''),
  error: (m, f) => console.error(`[gaffer] ${m}`, f ?? ''),
};
