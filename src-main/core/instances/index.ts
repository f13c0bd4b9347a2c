/** Agent instances (PROTOCOL §2): who said hello, their liveness and transitions, and the read models over them. */
export { InstanceRegistry, BEATS_WRITE_MS } from './registry';
export { prepareInstanceReads, type InstanceReads } from './read-store';
