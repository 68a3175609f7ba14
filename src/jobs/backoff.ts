/**
 * The one backoff rule of Herald's background queues (sends, webhook deliveries, and a job
 * runner's own failing claims). Each queue brings its documented schedule as data; the rule is
 * the same: the delay after the 1st, 2nd ... failure is taken from the schedule (the last one
 * repeats), optionally jittered, and the job gives up after a number of attempts or once a
 * window from its first attempt has passed.
 */
export interface RetrySchedule {
  /** Delay after the 1st, 2nd ... failure; the last one repeats. */
  readonly delaysMs: readonly number[];
  /** Spread each delay by up to ± this fraction (0.2: 80% to 120%), so retries do not bunch up. */
  readonly jitter?: number;
  /** Give up once this many attempts failed. */
  readonly maxAttempts?: number;
  /**
   * Give up once this long has passed since the first attempt; the retry that would land past
   * the window is pulled in to its end, so the last attempt happens exactly at its end.
   */
  readonly windowMs?: number;
}

/** Delays doubling from `baseMs` up to `capMs` (the cap then repeats): 5 s, 10 s, 20 s ... */
export function doublingDelays(baseMs: number, capMs: number): number[] {
  const delays: number[] = [];
  for (let delay = baseMs; delay < capMs; delay *= 2) delays.push(delay);
  delays.push(capMs);
  return delays;
}

/** The schedule's delay after `failures` failures (1 for the first), jittered if it says so. */
export function retryDelay(schedule: RetrySchedule, failures: number, random: () => number = Math.random): number {
  const { delaysMs, jitter = 0 } = schedule;
  const base = delaysMs[Math.min(Math.max(failures, 1), delaysMs.length) - 1]!;
  return jitter === 0 ? base : Math.round(base * (1 - jitter + random() * 2 * jitter));
}

/**
 * When to try again after the `failures`-th failure (at `failedAt`), or null when the job has
 * failed for good. `firstAttemptAt` anchors the schedule's window (defaults to `failedAt`).
 */
export function retryAt(schedule: RetrySchedule, failures: number, failedAt: number, firstAttemptAt = failedAt): number | null {
  if (schedule.maxAttempts !== undefined && failures >= schedule.maxAttempts) return null;
  const deadline = schedule.windowMs === undefined ? Infinity : firstAttemptAt + schedule.windowMs;
  if (failedAt >= deadline) return null;
  return Math.min(failedAt + retryDelay(schedule, failures), deadline);
}
