/**
 * Spend under control (PROTOCOL §14): daily caps and spend windows checked at dispatch and claim,
 * per-attempt caps against the running total, the price table that turns tokens into dollars, the
 * loop breaker, and the forecast. The composition root builds these; the rest of the core sees them
 * only through this interface.
 */
export { Budgets, DEFAULT_BUDGETS, type BudgetHolds, type BudgetVerdict, type Day } from './budgets';
export { Forecasts, RECENT_RUNS } from './forecast';
export { LoopBreaker, DEFAULT_SAME_ERROR_TIMES, normaliseError } from './loop-breaker';
export { PriceTable } from './prices';
export { NANO, usageSpend, type Spend, type SpendSource } from './spend';
export { SpendWindows, tokenWords } from './windows';
export { prepareAttemptSpendReads, type AttemptSpendReads } from './attempt-spend-store';
