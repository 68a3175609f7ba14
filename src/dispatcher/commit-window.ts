/**
 * Lets writes that come one by one share a commit. On SQLite every commit is an fsync, run on
 * the event loop's thread, and a send's outcome arrives alone, whenever the SMTP server or the
 * Cloud API answers. Holding each outcome until the window closes makes those arriving
 * meanwhile continue in the same turn of the event loop, where the group commit of
 * db/transaction.ts puts them in one transaction: under a backlog, many sends per fsync
 * instead of one. A lone outcome waits at most `ms`; it was already delivered, so the wait
 * costs nothing but a few milliseconds of the lease.
 */
export class CommitWindow {
  private closing: Promise<void> | undefined;

  constructor(private readonly ms: number) {}

  /** Resolves when the current window closes (the first caller opens it). */
  wait(): Promise<void> {
    if (this.ms <= 0) return Promise.resolve();
    this.closing ??= new Promise<void>((resolve) =>
      setTimeout(() => {
        this.closing = undefined;
        resolve();
      }, this.ms),
    );
    return this.closing;
  }
}
