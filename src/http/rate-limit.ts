/**
 * A token bucket per API key: `perSecond` sustained, `burst` at once (decisions.md, Limits).
 * Kept in this process's memory: with N API processes the account's ceiling is N times the
 * configured rate, which the README states. Buckets idle long enough to be full are dropped.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private sweptAt = 0;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
  ) {}

  /** Takes one token; returns 0 when allowed, else the seconds to wait before retrying. */
  take(key: string, now = Date.now()): number {
    this.sweep(now);
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
    bucket.at = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.perSecond));
  }

  /**
   * The key's quota as the IETF draft's RateLimit-* fields state it (docs/decisions.md, Rate
   * limit headers): the limit is the bucket's size (the most requests that can be sent at
   * once), remaining the whole tokens left, reset the seconds until the bucket is full again.
   * Reads the bucket without taking a token.
   */
  quota(key: string, now = Date.now()): { limit: number; remaining: number; reset: number } {
    const bucket = this.buckets.get(key);
    const tokens = bucket ? Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond) : this.burst;
    // A hair of float error must not make a full bucket look one token short.
    const whole = Math.floor(tokens + 1e-9);
    return { limit: this.burst, remaining: whole, reset: Math.max(0, Math.ceil((this.burst - tokens) / this.perSecond - 1e-9)) };
  }

  /** Gives back a token taken for something that turned out not to count. */
  refund(key: string): void {
    const bucket = this.buckets.get(key);
    if (bucket) bucket.tokens = Math.min(this.burst, bucket.tokens + 1);
  }

  private sweep(now: number): void {
    const refill = (this.burst / this.perSecond) * 1000;
    if (now - this.sweptAt < refill) return;
    this.sweptAt = now;
    for (const [key, bucket] of this.buckets) if (now - bucket.at >= refill) this.buckets.delete(key);
  }
}
