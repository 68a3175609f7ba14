import type { RetrySchedule } from '../jobs/backoff.js';

/**
 * Retry schedule of a failed webhook delivery (decisions.md: exponential backoff for at
 * least 24 hours, then failed). Delays after the 1st, 2nd ... failure; the last repeats.
 */
export const RETRY_DELAYS_MS: readonly number[] = [
  10_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000,
];

export const RETRY_WINDOW_MS = 24 * 3_600_000;

/**
 * The schedule as the one backoff rule (jobs/backoff.ts) takes it. The window runs from the
 * first attempt; the retry that would land past it is pulled in to its end, so the last attempt
 * happens exactly 24 hours after the first and a failure from then on is final.
 */
export const WEBHOOK_RETRY: RetrySchedule = { delaysMs: RETRY_DELAYS_MS, windowMs: RETRY_WINDOW_MS };
