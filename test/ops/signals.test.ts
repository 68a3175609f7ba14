import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { TEST_SECRET } from '../helpers/harness.js';
import { isAlive, launch, PRODUCTION_COMMAND } from './production-command.js';

/**
 * A stop signal to the process an operator started (`npm start`, or the production command that
 * the container runs) reaches Herald itself: it stops gracefully and nothing is left running.
 * Before, `npm start` ran `sh -c 'node ...'`: npm forwarded SIGTERM to the shell, the shell
 * died, and node went on serving under pid 1 without its graceful stop.
 * Real processes on a fresh SQLite file and a free port (PORT=0), on either engine's CI run.
 */
const STARTS: Array<{ name: string; command: string; args: string[] }> = [
  { name: 'npm start', command: 'npm', args: ['start', '--silent'] },
  { name: PRODUCTION_COMMAND.join(' '), command: PRODUCTION_COMMAND[0]!, args: PRODUCTION_COMMAND.slice(1) },
];

for (const start of STARTS) {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    test(`${signal} to \`${start.name}\` stops Herald gracefully and leaves no process behind`, async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'herald-signals-'));
      const run = launch(start.command, start.args, {
        DATA_DIR: dataDir,
        PORT: '0',
        HERALD_SECRET: TEST_SECRET,
        LOG_LEVEL: 'info',
        DATABASE_URL: '',
      });
      let heraldPid: number | undefined;
      try {
        const line = await run.started();
        heraldPid = line.pid;
        const port = line.port!;
        assert.ok(port > 0, run.output());
        assert.equal(await answers(port), true, 'serving before the signal');

        run.child.kill(signal);
        const exit = await Promise.race([run.exited, timeout(20_000)]);
        assert.deepEqual(exit, { code: 0, signal: null }, run.output());

        const lines = run.lines().filter((l) => l.pid === heraldPid);
        assert.ok(
          lines.some((l) => l.msg === 'herald stopping' && l.signal === signal),
          run.output(),
        );
        assert.ok(
          lines.some((l) => l.msg === 'herald stopped'),
          run.output(),
        );
        assert.equal(isAlive(heraldPid), false, `Herald's node process ${heraldPid} is gone`);
        assert.equal(await answers(port), false, 'the port is closed');
      } finally {
        if (run.child.exitCode === null) run.child.kill('SIGKILL');
        // An orphan (the failure this test is for) would keep serving, and keep the test's pipes open.
        if (heraldPid !== undefined && isAlive(heraldPid)) process.kill(heraldPid, 'SIGKILL');
        run.child.stdout?.destroy();
        run.child.stderr?.destroy();
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  }
}

function timeout(ms: number): Promise<never> {
  return new Promise((_, reject) => setTimeout(() => reject(new Error(`no exit within ${ms} ms`)), ms).unref());
}

/** Whether something accepts connections on 127.0.0.1:port. */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
