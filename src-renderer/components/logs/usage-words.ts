import type { UsageTotals } from '../../../src-main/common/logs';
import { formatCompact } from '../../lib/format';

/** "$0.0123" below a dollar, "$12.30" above. */
export function formatCost(usd: number): string {
  if (usd === 0) return '$0';
  return usd >= 1 ? `$${usd.toFixed(2)}` : `$${usd.toPrecision(3).replace(/0+$/, '').replace(/\.$/, '')}`;
}

/** "1.2k tokens in, 300 out, $0.0123" or "no usage reported". */
export function formatUsage(u: UsageTotals): string {
  if (u.inputTokens === 0 && u.outputTokens === 0 && u.costUsd === 0) return 'no usage reported';
  return `${formatCompact(u.inputTokens)} tokens in, ${formatCompact(u.outputTokens)} out, ${formatCost(u.costUsd)}`;
}
