/** Readiness signals for business keys, and their read model. */
export { Signals } from './signals';
export { prepareSignalReads, type SignalReads } from './read-store';
