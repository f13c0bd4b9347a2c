/**
 * The entry of the `gaffer-agent` package. The SDK's source of truth is `src-main/sdk` in the
 * Gaffer repository; this file only names what the package exports (the SDK, plus the logger
 * interface its options take). `build.mjs` bundles it into `dist/` for `npm pack`; inside the
 * repository the package resolves to these sources directly, so no build step is needed there.
 */
export * from '../../../src-main/sdk/index';
export { consoleLogger, silentLogger, type Logger } from '../../../src-main/common/logger';
