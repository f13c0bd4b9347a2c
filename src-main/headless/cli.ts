/** Moved to `server/cli.ts` so the Electron shell can share it (electron may not import headless). */
export * from '../server/cli';
