/**
 * Tokens (PROTOCOL §2, §17): per-agent and operator tokens, stored as hashes, compared in constant
 * time. The rest of the core and the server import this interface, never tokens.ts directly.
 */
export { TokenStore, hashToken, newSecret, secretsEqual, type TokenInfo } from './tokens';
