import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config.js';
import { TEST_SECRET } from '../helpers/harness.js';
import { launch, PRODUCTION_COMMAND, ROOT } from './production-command.js';

/**
 * The Dockerfile and compose.yaml, checked without a container engine (CI has none): the
 * essentials of the image are read from the Dockerfile, and what the image would run (its
 * entry, its HEALTHCHECK) is run here from the project root, as from the image's WORKDIR.
 */

interface Instruction {
  keyword: string;
  args: string;
}

interface Stage {
  from: string;
  name: string | undefined;
  instructions: Instruction[];
}

/** Instructions by stage: comments dropped, `\` continuations joined. */
function readDockerfile(): Stage[] {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const stages: Stage[] = [];
  const args = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const [, keyword, rest] = /^(\S+)\s+(.*)$/.exec(line)!;
    const instruction = { keyword: keyword!.toUpperCase(), args: rest!.replace(/\s+/g, ' ').trim() };
    if (instruction.keyword === 'ARG' && stages.length === 0) {
      const [name, value] = instruction.args.split('=');
      args.set(name!, value ?? '');
    } else if (instruction.keyword === 'FROM') {
      const [image, as, name] = instruction.args.split(' ');
      const from = image!.replace(/^\$\{(\w+)\}$/, (_, arg: string) => args.get(arg) ?? '');
      stages.push({ from, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else {
      stages.at(-1)!.instructions.push(instruction);
    }
  }
  return stages;
}

const all = (stage: Stage, keyword: string) => stage.instructions.filter((i) => i.keyword === keyword);
const execForm = (args: string) => JSON.parse(args) as string[];

/** `ENV A=1 B=2` lines of a stage, as one environment. */
function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { args } of all(stage, 'ENV')) for (const [, name, value] of args.matchAll(/(\w+)=(\S+)/g)) env[name!] = value!;
  return env;
}

const stages = readDockerfile();
const runtime = stages.at(-1)!;

test('multi-stage on node 20 bookworm-slim: compilers for the SQLite driver only in the build stage', () => {
  assert.ok(stages.length >= 2, 'a build stage and a runtime stage');
  for (const stage of stages) assert.equal(stage.from, 'node:20-bookworm-slim');
  const build = stages[0]!;
  assert.match(
    all(build, 'RUN')
      .map((r) => r.args)
      .join('\n'),
    /apt-get install -y --no-install-recommends python3 make g\+\+/,
  );
  assert.doesNotMatch(
    all(runtime, 'RUN')
      .map((r) => r.args)
      .join('\n'),
    /apt-get|g\+\+/,
  );
  const fromBuild = all(runtime, 'COPY').filter((c) => c.args.startsWith(`--from=${build.name}`));
  assert.deepEqual(
    fromBuild.map((c) => c.args.split(' ').slice(1)),
    [
      ['/app/node_modules', './node_modules'],
      ['/app/dist', './dist'],
    ],
  );
  assert.match(all(build, 'RUN').at(-1)!.args, /npm run build && npm prune --omit=dev/);
});

test('runs as the non-root user node, with DATA_DIR a volume and a HEALTHCHECK', () => {
  const users = all(runtime, 'USER');
  assert.deepEqual(
    users.map((u) => u.args),
    ['node'],
  );
  const order = runtime.instructions.map((i) => i.keyword);
  assert.ok(order.indexOf('USER') < order.indexOf('ENTRYPOINT'), 'USER before the entry');
  const env = envOf(runtime);
  assert.equal(env.DATA_DIR, '/data');
  assert.equal(env.HOST, '0.0.0.0', 'reachable from outside the container');
  assert.deepEqual(execForm(all(runtime, 'VOLUME')[0]!.args), [env.DATA_DIR]);
  assert.match(
    all(runtime, 'RUN')
      .map((r) => r.args)
      .join('\n'),
    /chown node:node \/data/,
  );
  assert.equal(all(runtime, 'HEALTHCHECK').length, 1);
  assert.equal(all(runtime, 'EXPOSE')[0]?.args, env.PORT);
});

test("the image's entry is the documented production command, and the README says so", () => {
  const entry = [...execForm(all(runtime, 'ENTRYPOINT')[0]!.args), ...execForm(all(runtime, 'CMD')[0]!.args)];
  assert.deepEqual(entry, PRODUCTION_COMMAND);
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  assert.ok(readme.includes(PRODUCTION_COMMAND.join(' ')), 'README documents the production command');
});

test('every file the Dockerfile copies from the project exists and passes .dockerignore', () => {
  const ignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const sources = stages
    .flatMap((s) => all(s, 'COPY'))
    .filter((c) => !c.args.startsWith('--from='))
    .flatMap((c) => c.args.split(' ').slice(0, -1));
  assert.ok(sources.length > 0);
  for (const source of sources) {
    const path = source.replace(/\/$/, '');
    assert.ok(existsSync(join(ROOT, path)), `${path} exists`);
    assert.equal(isSentToBuild(ignore, path), true, `${path} is not excluded by .dockerignore`);
  }
  assert.equal(isSentToBuild(ignore, 'data'), false, 'local data never goes into the build');
  assert.equal(isSentToBuild(ignore, 'node_modules'), false);
});

/** .dockerignore's rule: the last pattern that matches decides; `!` includes again. */
function isSentToBuild(patterns: string[], path: string): boolean {
  let sent = true;
  for (const pattern of patterns) {
    const negated = pattern.startsWith('!');
    const body = pattern.replace(/^!/, '').replace(/\/$/, '');
    if (body === '*' || body === path || path.startsWith(`${body}/`)) sent = negated;
  }
  return sent;
}

test("the image's entry serves, its HEALTHCHECK passes, and SIGTERM stops it gracefully", async () => {
  const env = envOf(runtime);
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-image-'));
  const port = String(await freePort());
  const imageEnv = { ...env, PORT: port, DATA_DIR: dataDir, HERALD_SECRET: TEST_SECRET, DATABASE_URL: '', LOG_LEVEL: 'info' };
  const entry = [...execForm(all(runtime, 'ENTRYPOINT')[0]!.args), ...execForm(all(runtime, 'CMD')[0]!.args)];
  const healthcheck = execForm(all(runtime, 'HEALTHCHECK')[0]!.args.replace(/^.*?CMD /, ''));
  const run = launch(entry[0]!, entry.slice(1), imageEnv);
  try {
    const line = await run.started();
    assert.equal(line.port, Number(port));
    assert.match(line.msg, new RegExp(`listening on http://0\\.0\\.0\\.0:${port} · database SQLite ${dataDir}/herald\\.db`));
    assert.equal(await exitCodeOf(healthcheck, imageEnv), 0, 'healthy while it serves');
    run.child.kill('SIGTERM');
    assert.deepEqual(await run.exited, { code: 0, signal: null });
    assert.ok(
      run.lines().some((l) => l.msg === 'herald stopped'),
      run.output(),
    );
    assert.equal(await exitCodeOf(healthcheck, imageEnv), 1, 'unhealthy once stopped');
  } finally {
    if (run.child.exitCode === null) run.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});

function exitCodeOf(command: string[], env: Record<string, string>): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(command[0]!, command.slice(1), { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: 'ignore' });
    child.on('exit', (code) => resolve(code));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The variables src/config.ts reads (`env.NAME`, `intVar(env, 'NAME', ...)`). */
function configVariables(): Set<string> {
  const source = readFileSync(join(ROOT, 'src/config.ts'), 'utf8');
  return new Set([...source.matchAll(/env\.([A-Z_]+)|\(env, '([A-Z_]+)'/g)].map((m) => (m[1] ?? m[2])!));
}

test('compose.yaml: Herald on PostgreSQL with an SMTP catcher, healthy dependencies, a configuration Herald accepts', () => {
  const compose = parse(readFileSync(join(ROOT, 'compose.yaml'), 'utf8')) as {
    services: Record<string, any>;
    volumes: Record<string, unknown>;
  };
  const { herald, postgres, mailpit } = compose.services;
  assert.equal(herald.build, '.');
  assert.equal(herald.init, true, 'an init as PID 1 (signals during start-up are not ignored)');
  const env = herald.environment as Record<string, string>;
  const known = configVariables();
  assert.ok(known.has('SMTP_URL') && known.has('DATABASE_URL'), 'the variables are read from config.ts');
  for (const name of Object.keys(env)) assert.ok(known.has(name), `${name} is a variable Herald reads`);

  const database = new URL(env.DATABASE_URL!);
  assert.equal(database.hostname, 'postgres');
  assert.equal(database.username, postgres.environment.POSTGRES_USER);
  assert.equal(database.password, postgres.environment.POSTGRES_PASSWORD);
  assert.equal(database.pathname, `/${postgres.environment.POSTGRES_DB}`);
  const smtp = new URL(env.SMTP_URL!);
  assert.equal(smtp.hostname, 'mailpit');
  assert.equal(smtp.port, '1025');
  assert.match(mailpit.image, /^axllent\/mailpit:/);

  for (const [name, dependency] of Object.entries(herald.depends_on as Record<string, { condition: string }>)) {
    assert.equal(dependency.condition, 'service_healthy', name);
    assert.ok(compose.services[name].healthcheck?.test, `${name} has a healthcheck`);
  }
  assert.deepEqual(Object.keys(herald.depends_on).sort(), ['mailpit', 'postgres']);
  const dataDir = envOf(runtime).DATA_DIR;
  assert.equal(env.DATA_DIR ?? dataDir, dataDir);
  assert.ok((herald.volumes as string[]).includes(`herald-data:${dataDir}`), 'DATA_DIR (the generated secret) is kept in a volume');
  assert.ok('herald-data' in compose.volumes);

  const config = loadConfig({ ...env, DATA_DIR: mkdtempSync(join(tmpdir(), 'herald-compose-')), HERALD_SECRET: TEST_SECRET });
  assert.equal(config.smtpUrl, env.SMTP_URL);
  rmSync(config.dataDir, { recursive: true, force: true });
});
