import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { type JobQueue, JobRunner } from '../../src/jobs/runner.js';

interface FakeJob {
  id: string;
  attempts: number;
}

const quiet = { error: () => undefined, warn: () => undefined };

/** An in-memory queue: jobs due now, each taking `ms` (or until released). */
function fakeQueue(options: { ms?: number; renew?: (ids: string[]) => string[] } = {}) {
  const due: FakeJob[] = [];
  const stats = { claims: 0, inFlight: 0, maxInFlight: 0, done: [] as string[], renewals: 0 };
  const queue: JobQueue<FakeJob> = {
    name: 'fake',
    async claim(_now, _leaseMs, limit) {
      stats.claims++;
      return { jobs: due.splice(0, limit) };
    },
    async nextDueAt() {
      return due.length > 0 ? 0 : undefined;
    },
    async run(job) {
      stats.inFlight++;
      stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
      await delay(options.ms ?? 5);
      stats.inFlight--;
      stats.done.push(job.id);
    },
    ...(options.renew && {
      renewLeases: async (leases: FakeJob[]) => {
        stats.renewals++;
        return options.renew!(leases.map((l) => l.id));
      },
    }),
  };
  const add = (n: number) => {
    for (let i = 0; i < n; i++) due.push({ id: `j${stats.done.length + due.length + i}`, attempts: 1 });
  };
  return { queue, stats, add };
}

/** Starts the runner and stops it when the test ends, pass or fail: a failed assertion must not leave a loop alive. */
function started<J extends { id: string; attempts: number }>(t: TestContext, runner: JobRunner<J>): JobRunner<J> {
  t.after(() => runner.stop(50));
  runner.start();
  return runner;
}

async function until(check: () => boolean, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await delay(5);
  }
}

describe('job runner', () => {
  test('runs every job, never more at once than its concurrency', async (t) => {
    const { queue, stats, add } = fakeQueue({ ms: 10 });
    add(20);
    const runner = started(t, new JobRunner(queue, { logger: quiet, leaseMs: 60_000, concurrency: 3, idlePollMs: 50 }));
    await until(() => stats.done.length === 20);
    assert.equal(await runner.stop(), 'drained');
    assert.equal(stats.maxInFlight, 3);
  });

  test('a notify() wakes an idle loop long before its poll', async (t) => {
    const { queue, stats, add } = fakeQueue();
    const runner = started(t, new JobRunner(queue, { logger: quiet, leaseMs: 60_000, concurrency: 4, idlePollMs: 60_000 }));
    await until(() => stats.claims >= 1);
    await delay(20);
    add(1);
    runner.notify();
    await until(() => stats.done.length === 1, 1_000);
    assert.equal(runner.health(Date.now()), 'ok');
    await runner.stop();
    assert.equal(runner.health(Date.now()), 'stopped');
  });

  test('a loop without a free slot claims as soon as a job ends, not at its idle poll', async (t) => {
    const { queue, stats, add } = fakeQueue({ ms: 20 });
    add(6);
    const runner = started(t, new JobRunner(queue, { logger: quiet, leaseMs: 60_000, concurrency: 2, idlePollMs: 60_000 }));
    await until(() => stats.done.length === 6, 1_000);
    await runner.stop();
    assert.equal(stats.maxInFlight, 2);
  });

  test('a job that ends does not make the loop claim again when its last claim came back short', async (t) => {
    const { queue, stats, add } = fakeQueue({ ms: 30 });
    add(1);
    const runner = started(t, new JobRunner(queue, { logger: quiet, leaseMs: 60_000, concurrency: 4, idlePollMs: 60_000 }));
    await until(() => stats.done.length === 1);
    await delay(50);
    // The first claim took the only job (1 of 4): the queue had nothing more, and a job's end adds nothing.
    assert.equal(stats.claims, 1);
    await runner.stop();
  });

  test('notify(at) wakes a sleeping loop at that moment, not before', async (t) => {
    const { queue, stats, add } = fakeQueue();
    const runner = started(t, new JobRunner(queue, { logger: quiet, leaseMs: 60_000, concurrency: 4, idlePollMs: 60_000 }));
    await until(() => stats.claims >= 1);
    await delay(20); // asleep: its look-ahead found nothing
    const at = Date.now() + 150;
    add(1);
    runner.notify(at);
    runner.notify(at + 10_000); // a later moment changes nothing
    await delay(60);
    assert.equal(stats.claims, 1, 'not claimed before its time');
    await until(() => stats.done.length === 1, 1_000);
    assert.ok(Date.now() >= at);
    await runner.stop();
  });

  test('notify(at) given while the loop works ends its next sleep at that moment', async (t) => {
    const { queue, stats, add } = fakeQueue();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const claim = queue.claim;
    const runner: JobRunner<FakeJob> = started(
      t,
      new JobRunner(
        {
          ...queue,
          claim: async (now, leaseMs, limit) => {
            await gate;
            return claim(now, leaseMs, limit);
          },
        },
        { logger: quiet, leaseMs: 60_000, concurrency: 4, idlePollMs: 60_000 },
      ),
    );
    const at = Date.now() + 150;
    runner.notify(at); // the first claim is still under way
    release();
    await delay(20);
    add(1);
    await delay(60);
    assert.equal(stats.done.length, 0, 'not claimed before its time');
    await until(() => stats.done.length === 1, 1_000);
    const late = Date.now() - at;
    assert.ok(late >= 0 && late < 300, `claimed ${late} ms after its time`);
    await runner.stop();
  });

  test('a job due when the claim came back without it (another worker holds it) is looked for again after minRecheckMs, not in a spin', async (t) => {
    let claims = 0;
    const queue: JobQueue<FakeJob> = {
      name: 'held elsewhere',
      claim: async () => {
        claims++;
        return { jobs: [], nextDueAt: 0 };
      },
      nextDueAt: async () => 0,
      run: async () => undefined,
    };
    const runner = started(
      t,
      new JobRunner(queue, { logger: quiet, leaseMs: 60_000, concurrency: 4, idlePollMs: 60_000, minRecheckMs: 100 }),
    );
    await delay(350);
    await runner.stop();
    assert.ok(claims >= 2 && claims <= 5, `${claims} claims`);
  });

  test('stop waits for jobs in flight; past its grace period it aborts them', async (t) => {
    const slow = fakeQueue({ ms: 100 });
    slow.add(2);
    const runner = started(t, new JobRunner(slow.queue, { logger: quiet, leaseMs: 60_000, concurrency: 4, idlePollMs: 50 }));
    await until(() => slow.stats.inFlight === 2);
    assert.equal(await runner.stop(), 'drained');
    assert.equal(slow.stats.done.length, 2, 'both finished before stop returned');

    const stuck = fakeQueue({ ms: 2_000 });
    stuck.add(1);
    const cut = started(t, new JobRunner(stuck.queue, { logger: quiet, leaseMs: 60_000, concurrency: 4, idlePollMs: 50 }));
    await until(() => stuck.stats.inFlight === 1);
    assert.equal(await cut.stop(50), 'timeout');
    assert.equal(cut.stopSignal.aborted, true);
    assert.equal(await cut.runOnce(), 0, 'nothing is claimed once stopped');
  });

  test('failing claims back off instead of spinning', async (t) => {
    let claims = 0;
    const queue: JobQueue<FakeJob> = {
      name: 'failing',
      claim: async () => {
        claims++;
        throw new Error('database away');
      },
      nextDueAt: async () => 0,
      run: async () => undefined,
    };
    const runner = started(t, new JobRunner(queue, { logger: quiet, leaseMs: 60_000, concurrency: 4, idlePollMs: 5_000 }));
    await delay(700);
    await runner.stop();
    // 200 ms, 400 ms ...: three claims in 0.7 s, not hundreds.
    assert.ok(claims >= 2 && claims <= 4, `${claims} claims`);
  });

  test('leases of running jobs are renewed; a job whose renewal failed is no longer held', async (t) => {
    let renewed = true;
    const { queue, stats, add } = fakeQueue({ ms: 400, renew: (ids) => (renewed ? ids : []) });
    add(1);
    const held: boolean[] = [];
    const run = queue.run;
    const runner: JobRunner<FakeJob> = started(
      t,
      new JobRunner(
        {
          ...queue,
          run: async (job, batch) => {
            held.push(runner.holdsLease(job));
            await run(job, batch);
            held.push(runner.holdsLease(job));
          },
        },
        { logger: quiet, leaseMs: 100, concurrency: 2, idlePollMs: 50 },
      ),
    );
    await until(() => stats.renewals >= 2);
    renewed = false;
    await until(() => stats.done.length === 1);
    await runner.stop();
    assert.deepEqual(held, [true, false]);
    assert.equal(runner.holdsLease({ id: 'j0', attempts: 1 }), false, 'released once done');
  });
});
