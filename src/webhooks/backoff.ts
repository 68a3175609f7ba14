/**
 * Retry schedule of a failed webhook delivery (decisions.md: exponential backoff for at
 * least 24 hours, then failed). Delays after the 1st, 2nd ... failure; the last repeats.
 */
export const RETRY_DELAYS_MS: readonly number[] = [
  10_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000,
];

export const RETRY_WINDOW_MS = 24 * 3_600_000;

/**
 * When to try again after a failure, or null when the delivery has failed for good.
 * The retry that would land past the 24-hour window is pulled in to the window's end, so the
 * last attempt happens exactly 24 hours after the first and a failure from then on is final.
 */
export function nextAttemptAt(firstAttemptAt: number, failedAt: number, failures: number): number | null {
  const deadline = firstAttemptAt + RETRY_WINDOW_MS;
  if (failedAt >= deadline) return null;
  const delay = RETRY_DELAYS_MS[Math.min(Math.max(failures, 1), RETRY_DELAYS_MS.length) - 1]!;
  return Math.min(failedAt + delay, deadline);
}
