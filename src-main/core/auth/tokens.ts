/**
 * Agent tokens: 256-bit random secrets, shown once at creation, stored only as SHA-256 hashes,
 * optionally bound to a role, revocable. Verification compares hashes in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { GafferError } from '../../common/errors';
import { isoTime, isoTimeOrNull } from '../../common/iso-time';
import { actorName, reason, roleName } from '../../common/schemas';
import { parseOrThrow } from '../../common/validate';
import type { TokenInfo } from '../../common/model';
import type { CoreContext } from '../context';
import { newId } from '../ids';
import { prepareTokenStatements, type TokenRow } from './store';

export type { TokenInfo };

const createTokenInput = z.strictObject({
  name: z.string().trim().min(1, 'a name is required').max(200),
  role: roleName.nullable().optional(),
  actor: actorName,
});
const revokeTokenInput = z.strictObject({ id: z.string().min(1).max(100), reason, actor: actorName });

export function hashToken(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function newSecret(): string {
  return `gft_${randomBytes(32).toString('base64url')}`;
}

/** Constant-time comparison of two secrets of any length. */
export function secretsEqual(a: string, b: string): boolean {
  const ha = Buffer.from(hashToken(a), 'hex');
  const hb = Buffer.from(hashToken(b), 'hex');
  return timingSafeEqual(ha, hb);
}

export class TokenStore {
  private readonly q;

  constructor(private readonly ctx: CoreContext) {
    this.q = prepareTokenStatements(ctx.db);
  }

  private info(r: TokenRow): TokenInfo {
    return {
      id: r.id,
      name: r.name,
      role: r.role,
      createdAt: isoTime(r.created_at),
      revokedAt: isoTimeOrNull(r.revoked_at),
    };
  }

  /** Creates an agent token. The secret is returned here and never again. */
  create(input: unknown): { id: string; token: string; info: TokenInfo } {
    const { name, role, actor } = parseOrThrow(createTokenInput, input, 'token');
    const token = newSecret();
    return this.ctx.store.write(() => {
      const id = newId('tok');
      this.q.insert.run(id, name, role ?? null, hashToken(token), this.ctx.clock.now());
      this.ctx.audit.append({ type: 'token.create', actor, subject: `token:${id}`, detail: { name, role: role ?? null } });
      return { id, token, info: this.info(this.q.byId.get(id)!) };
    });
  }

  /** The live token matching `secret`, or undefined. Never logs the secret. */
  verify(secret: string): TokenInfo | undefined {
    if (typeof secret !== 'string' || secret.length === 0 || secret.length > 200) return undefined;
    const hash = hashToken(secret);
    const row = this.q.byHash.get(hash);
    if (!row || row.revoked_at !== null) return undefined;
    if (!timingSafeEqual(Buffer.from(row.hash, 'hex'), Buffer.from(hash, 'hex'))) return undefined;
    return this.info(row);
  }

  revoke(input: unknown): TokenInfo {
    const { id, reason: why, actor } = parseOrThrow(revokeTokenInput, input, 'revoke');
    return this.ctx.store.write(() => {
      const row = this.q.byId.get(id);
      if (!row || row.kind !== 'agent') throw new GafferError('not_found', `unknown token ${id}`);
      if (this.q.revoke.run(this.ctx.clock.now(), id).changes === 0) {
        throw new GafferError('invalid_transition', `token ${id} is already revoked`);
      }
      this.ctx.audit.append({ type: 'token.revoke', actor, subject: `token:${id}`, detail: { reason: why } });
      const info = this.info(this.q.byId.get(id)!);
      this.ctx.store.emit({ type: 'token.revoked', token: info });
      return info;
    });
  }

  list(): TokenInfo[] {
    return this.q.all.all().map((r) => this.info(r));
  }
}
