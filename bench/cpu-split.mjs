/**
 * Splits a `node --cpu-prof` profile of the bench's dispatch burst by pipeline step (issue 9).
 *
 *   BENCH_ONLY=dispatch BENCH_DISPATCH_SENDS=4000 BENCH_PROFILE_WINDOW=1 \
 *     node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/run.ts   # prints "burst window (µs): FROM TO"
 *   node bench/cpu-split.mjs /tmp/prof/CPU.*.0.001.cpuprofile FROM TO     # the main thread's profile
 *
 * Each sample goes to the step of the frame nearest its leaf that names one (so a query run by
 * the claim counts as claim). Profiles have no async stacks: work resumed after an await shows
 * only the frames since then, which is why group-commit statements are a step of their own.
 * A thread blocked in a system call (fsync, socket write) is sampled as busy in that call.
 * LEAF=name limits the split to samples whose leaf function has that name; STEP=text, the top
 * self time to samples of the steps whose name holds that text (e.g. STEP=MIME).
 */
import { readFileSync } from 'node:fs';

const [file, from = '0', to = 'Infinity'] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parentOf = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);

const nodemailer = (parts) => new RegExp(`nodemailer/dist/\\w+/(${parts})/`);
const STEPS = [
  [
    'claim (and lease renewals)',
    (_url, fn) => /^(claimBatch|claimIn|claimWithDueData|renewSendLeases|nextDueAt)$/.test(fn) || /src\/jobs\/runner/.test(_url),
  ],
  [
    'outcome write',
    (url, fn) =>
      /src\/dispatcher\/outcome/.test(url) || /^(recordDelivered|recordSent|recordSentMany|markSent|fail|finishUndelivered)$/.test(fn),
  ],
  ['commit (group commit: BEGIN/SAVEPOINT/RELEASE/COMMIT, fsync included)', (url) => /src\/db\/transaction\.[jt]s/.test(url)],
  ['bench harness (queueing the burst, polling)', (url) => /\/bench\//.test(url)],
  ['rendering', (url) => /src\/rendering\/|render-request|liquidjs|email-links|unsubscribe-token|src\/signing/.test(url)],
  [
    'MIME build',
    (url) =>
      nodemailer('mime-node|mail-composer|mime-funcs|qp|base64|addressparser|punycode|mailer|shared').test(url) ||
      url === 'node:internal/streams/pipeline',
  ],
  [
    'SMTP',
    (url, fn) => nodemailer('smtp-connection|smtp-pool|smtp-transport').test(url) || (url === 'node:net' && fn.startsWith('Socket._write')),
  ],
  [
    'due-time checks',
    (url, fn) =>
      fn === 'checkAtDueTime' ||
      /due-checks|campaigns\.(service|repo)|contacts\.(service|repo)|recipient-rules|suppressions|sends\.repo|whatsapp-credentials/.test(
        url,
      ),
  ],
];
const API = /fastify|light-my-request|src\/http\/|src\/modules\/sends\/(trigger|sends\.routes)|src\/modules\/contacts\/contacts\.routes/;
const DATABASE = /kysely|better-sqlite3|src\/db\//;

function step(id) {
  const stack = [];
  for (let cur = id; cur !== undefined; cur = parentOf.get(cur)) stack.push(byId.get(cur).callFrame);
  const leaf = stack[0].functionName;
  if (leaf === '(idle)') return undefined;
  if (leaf === '(garbage collector)') return 'other: garbage collector';
  // A process that also serves the API (the sustained line): its requests are a step of their own.
  if (stack.some((frame) => API.test(frame.url))) return 'API requests (HTTP, trigger; their commits are in commit)';
  for (const frame of stack) for (const [name, test] of STEPS) if (test(frame.url, frame.functionName)) return name;
  if (stack.some((frame) => DATABASE.test(frame.url))) return 'database, step not on the stack';
  return leaf === '(program)' ? 'other: (program)' : 'other';
}

const steps = new Map();
const selfTime = new Map();
const cache = new Map();
let total = 0;
let t = profile.startTime;
profile.samples.forEach((id, i) => {
  t += profile.timeDeltas[i];
  if (t < Number(from) || t > Number(to)) return;
  if (!cache.has(id)) cache.set(id, step(id));
  const name = cache.get(id);
  const frame = byId.get(id).callFrame;
  if (name === undefined || (process.env.LEAF && frame.functionName !== process.env.LEAF)) return;
  total++;
  steps.set(name, (steps.get(name) ?? 0) + 1);
  if (process.env.STEP && !name.includes(process.env.STEP)) return;
  const where = frame.url.replace(/.*node_modules\//, '').replace(/^file:\/\/.*?\/(src|bench|test)\//, '$1/');
  const key = `${frame.functionName || '(anonymous)'} ${where}${frame.lineNumber >= 0 ? `:${frame.lineNumber + 1}` : ''}`;
  selfTime.set(key, (selfTime.get(key) ?? 0) + 1);
});
const show = (map, n) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .forEach(([k, v]) => console.log(`${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`));
console.log(`${total} busy samples in the window`);
show(steps, 20);
console.log('\ntop self time:');
show(selfTime, 10);
