/**
 * The admin panel's heavy reads on a large account: 100,000 contacts and 1,000,000 events,
 * on SQLite and (when DATABASE_URL is set) PostgreSQL. Each query runs BENCH_RUNS times
 * (default 50) after a warm-up; p50 and p95 are printed with PASS/MISS against p95 < 300 ms.
 * A miss never fails the run.
 *
 *   node --import tsx bench/admin-queries.ts
 *   DATABASE_URL=postgres://... node --import tsx bench/admin-queries.ts
 *
 *   BENCH_CONTACTS / BENCH_EVENTS  data size (default 100000 / 1000000)
 *   BENCH_RUNS                     timed runs per query (default 50)
 *   BENCH_KEEP=1                   keep the data: the PostgreSQL rows, the SQLite file (path printed)
 *   BENCH_ENGINES                  sqlite,postgres (default: both; postgres needs DATABASE_URL)
 *   DATABASE_PREPARED_STATEMENTS   Herald's setting (default true), to compare plans with and without
 *   BENCH_ONLY                     measure only the queries whose name contains this text (e.g. "segment")
 *
 * The data goes in with multi-row inserts in large transactions, straight into the tables
 * (the contact rules are not what is measured here), events oldest first as traffic writes
 * them; then VACUUM ANALYZE on PostgreSQL, the steady state its autovacuum keeps. SQLite runs
 * without ANALYZE: Herald never runs it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { type Db, type Engine, openDatabase } from '../src/db/connect.js';
import { newId } from '../src/ids.js';
import { createAccount } from '../src/modules/accounts/accounts.service.js';
import { listActivity } from '../src/modules/activity/activity.service.js';
import { countContacts, searchContacts } from '../src/modules/contacts/contacts.admin.service.js';
import { getContactProfile } from '../src/modules/contacts/contacts.service.js';
import { createField, createKpi } from '../src/modules/definitions/definitions.service.js';
import { expireCounts } from '../src/modules/segments/segment-counts.js';
import type { Criteria } from '../src/modules/segments/segment-criteria.js';
import { countSegment, createSegment, listSegments, previewSegment } from '../src/modules/segments/segments.service.js';

const CONTACTS = whole('BENCH_CONTACTS', 100_000);
const EVENTS = whole('BENCH_EVENTS', 1_000_000);
const RUNS = whole('BENCH_RUNS', 50);
const WARMUP = 3;
const TARGET_P95_MS = 300;
const DAY = 86_400_000;

const FIRST = [
  'Ada',
  'Alan',
  'Grace',
  'Linus',
  'Margaret',
  'Edsger',
  'Barbara',
  'Donald',
  'Frances',
  'John',
  'Katherine',
  'Dennis',
  'Radia',
  'Ken',
  'Hedy',
  'Tim',
  'Sophie',
  'Claude',
  'Mary',
  'Niklaus',
  'Joan',
  'Guido',
  'Anita',
  'Bjarne',
  'Lynn',
  'James',
  'Adele',
  'Vint',
  'Shafi',
  'Yukihiro',
];
const LAST = [
  'Lovelace',
  'Turing',
  'Hopper',
  'Torvalds',
  'Hamilton',
  'Dijkstra',
  'Liskov',
  'Knuth',
  'Allen',
  'McCarthy',
  'Johnson',
  'Ritchie',
  'Perlman',
  'Thompson',
  'Lamarr',
  'Berners-Lee',
  'Wilson',
  'Shannon',
  'Keller',
  'Wirth',
  'Clarke',
  'van Rossum',
  'Borg',
  'Stroustrup',
  'Conway',
  'Gosling',
  'Goldberg',
  'Cerf',
  'Goldwasser',
  'Matsumoto',
];
const TAGS = ['vip', 'newsletter', 'black-friday', 'trial', 'churned', 'partner'];
const CITIES = ['Paris', 'Lyon', 'Berlin', 'Madrid', 'Rome', 'Lisbon', 'Dublin', 'Vienna', 'Prague', 'Oslo'];
/** Event types with skewed frequencies, as real traffic has: page views dominate. */
const TYPES: [string, number][] = [
  ['page_view', 40],
  ['click', 20],
  ['signup', 8],
  ['login', 12],
  ['purchase', 6],
  ['cart_add', 6],
  ['nps', 2],
  ['trial_started', 3],
  ['support_ticket', 2],
  ['refund', 1],
];

function whole(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number of 1 or more, got '${raw}'`);
  return value;
}

/** A small deterministic generator: every run seeds the same shape of data. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = rng(42);
const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
const typeWeights = TYPES.reduce((sum, [, w]) => sum + w, 0);
function pickType(): string {
  let r = random() * typeWeights;
  for (const [type, weight] of TYPES) {
    r -= weight;
    if (r < 0) return type;
  }
  return TYPES[0]![0];
}

const one = (group: Criteria['groups'][number]): Criteria => ({ groups: [group] });
/** Counts measured one by one (the form of each as the panel saves it). */
const COUNTED: Record<string, Criteria> = {
  'page_view in 90 days': one({ events: [{ type: 'page_view', withinDays: 90 }] }),
  'purchase in 90 days': one({ events: [{ type: 'purchase', withinDays: 90 }] }),
  'signup 90 d + metadata': one({ events: [{ type: 'signup', withinDays: 90, metadata: { key: 'plan', value: 'pro' } }] }),
  'event + tag + field': one({ events: [{ type: 'purchase', withinDays: 90 }], tags: ['vip'], fields: [{ name: 'City', value: 'Paris' }] }),
  'no purchase in 90 days': one({ events: [{ type: 'purchase', withinDays: 90, negated: true }] }),
  'Score > 50 and purchases >= 3': one({
    fields: [{ name: 'Score', op: 'gt', value: 50 }],
    kpis: [{ id: 'purchases', op: 'gte', value: 3 }],
  }),
  'OR: refund 30 d | vip, no login 90 d | Score 10..20': {
    groups: [
      { events: [{ type: 'refund', withinDays: 30 }] },
      { tags: ['vip'], events: [{ type: 'login', withinDays: 90, negated: true }] },
      { fields: [{ name: 'Score', op: 'between', value: 10, to: 20 }] },
    ],
  },
};
/** Criteria whose preview (count and first page of contacts) is measured: few contacts, many, and all but some. */
const PREVIEWED: Record<string, Criteria> = {
  'event + tag + field': COUNTED['event + tag + field']!,
  'OR: refund 30 d | vip, no login 90 d | Score 10..20': COUNTED['OR: refund 30 d | vip, no login 90 d | Score 10..20']!,
  'no purchase in 90 days': COUNTED['no purchase in 90 days']!,
};
/** The saved segments of the account, the list counting each. */
const LISTED_SEGMENTS: Record<string, Criteria> = {
  'Buyers (purchase 90 d)': COUNTED['purchase in 90 days']!,
  'Pro signups': COUNTED['signup 90 d + metadata']!,
  'Lapsed (no purchase 90 d)': COUNTED['no purchase in 90 days']!,
  'VIP buyers in Paris': COUNTED['event + tag + field']!,
  'High score repeat buyers': COUNTED['Score > 50 and purchases >= 3']!,
  'Win-back OR': COUNTED['OR: refund 30 d | vip, no login 90 d | Score 10..20']!,
};

interface Seeded {
  accountId: string;
  run: string;
  contactIds: string[];
  /** Emails of listed (not archived) contacts. */
  emails: string[];
}

/** Rows per INSERT: under SQLite's 32,766 bound variables and PostgreSQL's 65,535. */
const rowsPerInsert = (columns: number) => Math.floor(30_000 / columns);

async function insertMany(db: Db, table: string, rows: Record<string, unknown>[]): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]!);
  const size = rowsPerInsert(columns.length);
  // One transaction per 50,000 rows: few commits (fsyncs), none very large.
  for (let start = 0; start < rows.length; start += 50_000) {
    await db.kysely.transaction().execute(async (tx) => {
      for (let i = start; i < Math.min(rows.length, start + 50_000); i += size) {
        await tx
          .insertInto(table as 'events')
          .values(rows.slice(i, Math.min(i + size, start + 50_000, rows.length)) as never)
          .execute();
      }
    });
  }
}

async function seed(db: Db): Promise<Seeded> {
  const run = randomBytes(4).toString('hex');
  const { id: accountId } = await createAccount(db, { name: `bench ${run}`, plan: 'pro', allowance: null });
  const city = await createField(db, accountId, { name: 'City', type: 'location' });
  const score = await createField(db, accountId, { name: 'Score', type: 'number' });
  await createKpi(db, accountId, { id: 'purchases', name: 'Purchases' });
  const now = Date.now();
  const contactIds: string[] = [];
  const emails: string[] = [];
  const contacts = [],
    contactEmails = [],
    phones = [],
    tags = [],
    fields = [],
    kpis = [];
  for (let i = 0; i < CONTACTS; i++) {
    const id = newId('ld');
    const email = `c${i}-${run}@bench.example.com`;
    contactIds.push(id);
    // Oldest first over the last year, so newest-first is the reverse of insertion, as in real life.
    const createdAt = now - 365 * DAY + Math.floor((i / CONTACTS) * 365 * DAY);
    const archived = random() < 0.05 ? 1 : 0;
    // The search leaves archived contacts out: only listed ones' emails are searched for.
    if (!archived) emails.push(email);
    contacts.push({
      id,
      account_id: accountId,
      name: `${pick(FIRST)} ${pick(LAST)}`,
      archived,
      opted_out: random() < 0.03 ? 1 : 0,
      metadata: '{}',
      created_at: createdAt,
      updated_at: createdAt,
    });
    contactEmails.push({ account_id: accountId, email, contact_id: id, position: 0 });
    if (i % 2 === 0) phones.push({ account_id: accountId, phone: `+3361${String(i).padStart(7, '0')}`, contact_id: id, position: 0 });
    for (const tag of TAGS) if (random() < 0.15) tags.push({ account_id: accountId, contact_id: id, tag });
    if (random() < 0.3) fields.push({ account_id: accountId, contact_id: id, field_id: city.id, value: JSON.stringify(pick(CITIES)) });
    if (random() < 0.5)
      fields.push({ account_id: accountId, contact_id: id, field_id: score.id, value: JSON.stringify(Math.floor(random() * 100)) });
    if (random() < 0.2)
      kpis.push({ account_id: accountId, contact_id: id, kpi_id: 'purchases', value_micros: Math.ceil(random() * 10) * 1_000_000 });
  }
  await insertMany(db, 'contacts', contacts);
  await insertMany(db, 'contact_emails', contactEmails);
  await insertMany(db, 'contact_phones', phones);
  await insertMany(db, 'contact_tags', tags);
  await insertMany(db, 'contact_field_values', fields);
  await insertMany(db, 'contact_kpis', kpis);

  // Events over the last 180 days, in time order, in slices (a million rows never sit in memory at once).
  const step = (180 * DAY) / EVENTS;
  for (let done = 0; done < EVENTS; done += 100_000) {
    const slice = [];
    for (let i = done; i < Math.min(EVENTS, done + 100_000); i++) {
      const metadata = random() < 0.5 ? { plan: random() < 0.3 ? 'pro' : 'free', source: pick(['ads', 'seo', 'email', 'direct']) } : {};
      slice.push({
        id: newId('ev'),
        account_id: accountId,
        contact_id: pick(contactIds),
        type: pickType(),
        value: null,
        metadata: JSON.stringify(metadata),
        url: null,
        created_at: Math.floor(now - 180 * DAY + i * step),
      });
    }
    await insertMany(db, 'events', slice);
  }
  for (const [name, criteria] of Object.entries(LISTED_SEGMENTS)) await createSegment(db, accountId, { name, criteria });
  if (db.engine === 'postgres') {
    for (const table of ['events', 'contacts', 'contact_emails', 'contact_phones', 'contact_tags', 'contact_field_values', 'contact_kpis'])
      await sql`vacuum analyze ${sql.table(table)}`.execute(db.kysely);
  }
  return { accountId, run, contactIds, emails };
}

interface Measure {
  name: string;
  /** One run of the query; its result is checked so a broken query cannot look fast. */
  run: () => Promise<unknown>;
}

function measures(db: Db, s: Seeded): Measure[] {
  const { accountId } = s;
  const someEmail = () => s.emails[Math.floor(random() * s.emails.length)]!;
  const someContact = () => s.contactIds[Math.floor(random() * s.contactIds.length)]!;
  const somePrefix = () =>
    pick([...FIRST, ...LAST])
      .slice(0, 3)
      .toLowerCase();
  const nonEmpty = (page: { items: unknown[] }) => {
    if (page.items.length === 0) throw new Error('the query found nothing: the benchmark data is not what it expects');
    return page;
  };
  return [
    { name: 'contact search by email', run: async () => nonEmpty(await searchContacts(db, accountId, { q: someEmail() })) },
    { name: 'contact search by name text', run: async () => nonEmpty(await searchContacts(db, accountId, { q: somePrefix() })) },
    // Text inside an email: the run's id is in every bench email, so the page fills at once.
    { name: 'contact search, part of an email', run: async () => nonEmpty(await searchContacts(db, accountId, { q: `-${s.run}@` })) },
    // Worst case of the substring scan: nothing matches, every name and email is read.
    { name: 'contact search, text matching nobody', run: () => searchContacts(db, accountId, { q: 'zzq' }) },
    { name: 'contact count, whole list', run: () => countContacts(db, accountId, {}) },
    { name: 'contact count, name text', run: () => countContacts(db, accountId, { q: somePrefix() }) },
    { name: 'contact count, text matching nobody', run: () => countContacts(db, accountId, { q: 'zzq' }) },
    { name: 'contact list, first page', run: async () => nonEmpty(await searchContacts(db, accountId, {})) },
    { name: 'contact list, tag filter', run: async () => nonEmpty(await searchContacts(db, accountId, { tag: 'vip' })) },
    {
      name: 'contact profile + activity feed',
      run: async () => {
        const id = someContact();
        const [profile] = await Promise.all([getContactProfile(db, accountId, { id }), listActivity(db, accountId, id, { limit: 100 })]);
        if (!profile) throw new Error('profile not found');
      },
    },
    ...Object.entries(COUNTED).map(([name, criteria]) => ({
      name: `segment count: ${name}`,
      run: () => countSegment(db, accountId, criteria),
    })),
    // The segment form's preview (POST /segments/preview): the criteria checked, then the count
    // and the first page of contacts side by side, as a segment's page reads them.
    ...Object.entries(PREVIEWED).map(([name, criteria]) => ({
      name: `segment preview: ${name}`,
      run: async () => nonEmpty(await previewSegment(db, accountId, criteria)),
    })),
    {
      name: `segment list, ${Object.keys(LISTED_SEGMENTS).length} counted afresh`,
      run: async () => {
        expireCounts();
        return nonEmpty(await listSegments(db, accountId));
      },
    },
    // As the panel sees it on a second visit within a minute (segment-counts.ts).
    { name: 'segment list, counts kept', run: async () => nonEmpty(await listSegments(db, accountId)) },
  ];
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function time(m: Measure): Promise<{ p50: number; p95: number }> {
  for (let i = 0; i < WARMUP; i++) await m.run();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await m.run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p95: percentile(times, 95) };
}

/** Removes the run's rows from a shared PostgreSQL (children first: foreign keys). */
async function cleanUp(db: Db, accountId: string): Promise<void> {
  for (const table of [
    'events',
    'contact_field_values',
    'contact_kpis',
    'contact_tags',
    'contact_phones',
    'contact_emails',
    'contacts',
    'custom_fields',
    'kpis',
    'segments',
  ] as const) {
    await db.kysely.deleteFrom(table).where('account_id', '=', accountId).execute();
  }
  await db.kysely.deleteFrom('accounts').where('id', '=', accountId).execute();
}

async function benchEngine(engine: Engine): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-admin-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    DATABASE_URL: engine === 'postgres' ? process.env.DATABASE_URL : '',
    HERALD_SECRET: 'bench',
    DATABASE_PREPARED_STATEMENTS: process.env.DATABASE_PREPARED_STATEMENTS ?? '',
  });
  const db = await openDatabase(config);
  let seeded: Seeded | undefined;
  try {
    const started = performance.now();
    seeded = await seed(db);
    console.log(
      `\n${engine}: seeded ${CONTACTS.toLocaleString('en')} contacts and ${EVENTS.toLocaleString('en')} events in ${((performance.now() - started) / 1000).toFixed(1)} s; ${RUNS} runs per query`,
    );
    console.log(`${'query'.padEnd(40)} ${'p50 ms'.padStart(8)} ${'p95 ms'.padStart(8)}  target p95 < ${TARGET_P95_MS} ms`);
    const only = process.env.BENCH_ONLY ?? '';
    for (const m of measures(db, seeded).filter((m) => m.name.includes(only))) {
      const { p50, p95 } = await time(m);
      console.log(
        `${m.name.padEnd(40)} ${p50.toFixed(1).padStart(8)} ${p95.toFixed(1).padStart(8)}  ${p95 < TARGET_P95_MS ? 'PASS' : 'MISS'}`,
      );
    }
  } finally {
    if (seeded && engine === 'postgres' && process.env.BENCH_KEEP !== '1') await cleanUp(db, seeded.accountId);
    await db.close();
    const keep = process.env.BENCH_KEEP === '1';
    if (keep) console.log(`kept: ${engine === 'sqlite' ? join(dataDir, 'herald.db') : `account ${seeded?.accountId}`}`);
    if (!keep || engine === 'postgres') rmSync(dataDir, { recursive: true, force: true });
  }
}

const engines = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',').map((e) => e.trim());
if (engines.includes('sqlite')) await benchEngine('sqlite');
if (engines.includes('postgres') && process.env.DATABASE_URL) await benchEngine('postgres');
