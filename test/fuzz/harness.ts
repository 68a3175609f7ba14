import assert from 'node:assert/strict';
import { Agent, request as httpRequest, STATUS_CODES } from 'node:http';
import { sql } from 'kysely';
import type { Db } from '../../src/db/connect.js';

/** One generated request, exactly as it goes on the wire. */
export interface FuzzRequest {
  method: string;
  /** Path and query string, already percent-encoded (possibly malformed on purpose). */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Send the body chunked, without a content-length. */
  chunked?: boolean;
}

export interface FuzzResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * Real HTTP, so odd content types and raw bodies go through Node's parser as a client's would.
 * `localAddress` is a loopback address of the run's own: per-address throttles (sign-in, unknown
 * keys) then never count against the 127.0.0.1 that other test files use.
 */
export function send(port: number, localAddress: string, req: FuzzRequest): Promise<FuzzResponse> {
  const agent = agentFor(localAddress);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...req.headers };
    // Framed either way: Node sends a DELETE's body unframed unless told (that is a malformed stream, tested on its own).
    if (req.body !== undefined)
      headers[req.chunked ? 'transfer-encoding' : 'content-length'] = req.chunked ? 'chunked' : String(req.body.length);
    const outgoing = httpRequest({ host: '127.0.0.1', port, localAddress, method: req.method, path: req.path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(req.body);
  });
}

/** Connections are kept alive (a new one per request costs more than most requests). */
const agents = new Map<string, Agent>();
function agentFor(localAddress: string): Agent {
  let agent = agents.get(localAddress);
  if (!agent) {
    agent = new Agent({ keepAlive: true, localAddress });
    agents.set(localAddress, agent);
  }
  return agent;
}

export function closeAgents(): void {
  for (const agent of agents.values()) agent.destroy();
  agents.clear();
}

/** A loopback address of its own for one run (127.0.0.0/8 all reaches the server on 127.0.0.1). */
export function runAddress(seed: number): string {
  const n = Math.abs(seed) % (250 * 250);
  return `127.${Math.floor(n / 250) + 1}.${(n % 250) + 1}.${(Math.abs(seed >> 16) % 250) + 2}`;
}

/** The tables of the database, from its catalogue, so a table added later is counted too. */
export async function listTables(db: Db): Promise<string[]> {
  const query =
    db.engine === 'postgres'
      ? sql<{
          name: string;
        }>`select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' order by 1`
      : sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by 1`;
  return (await query.execute(db.kysely)).rows.map((r) => r.name);
}

/** Row count of every table, in one statement. */
export async function rowCounts(db: Db, tables: string[]): Promise<Record<string, number>> {
  const union = tables.map((t) => `select '${t}' as name, count(*) as n from "${t.replace(/"/g, '""')}"`).join(' union all ');
  const { rows } = await sql<{ name: string; n: number | string }>`${sql.raw(union)}`.execute(db.kysely);
  return Object.fromEntries(rows.map((r) => [r.name, Number(r.n)]));
}

/** The error body of decisions.md: `{statusCode, error, message, details?}`, JSON, with x-request-id. */
export function assertErrorBody(req: FuzzRequest, res: FuzzResponse): void {
  assert.ok(res.headers['x-request-id'], 'every response carries x-request-id');
  if (req.method === 'HEAD') return; // no body to judge
  assert.match(String(res.headers['content-type']), /^application\/json/, `a ${res.status} is JSON: ${res.text.slice(0, 200)}`);
  let body: any;
  try {
    body = JSON.parse(res.text);
  } catch {
    assert.fail(`a ${res.status} body parses as JSON: ${res.text.slice(0, 200)}`);
  }
  assert.equal(body.statusCode, res.status, 'statusCode is the HTTP status');
  assert.equal(body.error, STATUS_CODES[res.status], 'error is the reason phrase');
  assert.equal(typeof body.message, 'string');
  assert.ok(body.message.length > 0, 'message is not empty');
  assert.ok(typeof body.code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(body.code), `a machine code: ${body.code}`);
  const allowed = new Set(['statusCode', 'error', 'code', 'message', 'details', 'requestId']);
  for (const member of Object.keys(body)) assert.ok(allowed.has(member), `no member ${member} in an error body`);
  assert.ok(!/\bat .*\(.*:\d+:\d+\)/.test(res.text), 'no stack trace');
  // A Validation Error and a missing scope always list details; a key sent in the query of a
  // header-only route may; other errors never do (decisions.md, Public API).
  const withDetails = body.message === 'Validation Error' || body.message === 'API key does not have the required permissions';
  if (withDetails || (body.message === 'API key is required' && body.details !== undefined)) {
    assert.ok(Array.isArray(body.details) && body.details.length > 0, `a ${body.message} lists details`);
    for (const d of body.details) {
      assert.equal(typeof d.path, 'string');
      assert.ok(d.path.startsWith('/'), `details path is a JSON pointer: ${d.path}`);
      assert.equal(typeof d.message, 'string');
    }
  } else {
    assert.equal(
      body.details,
      undefined,
      'details only on a Validation Error, a missing scope or a key in the query of a header-only route',
    );
  }
}

/** Tables whose change is the point of a 4xx: failed sign-ins are counted to throttle them. */
export function tablesA4xxMayChange(route: string): Set<string> {
  return new Set(route === '/admin/api/login' ? ['login_throttle'] : []);
}

export function assertUnchanged(before: Record<string, number>, after: Record<string, number>, except: Set<string>): void {
  const changed = Object.keys({ ...before, ...after }).filter((t) => !except.has(t) && before[t] !== after[t]);
  assert.deepEqual(
    changed.map((t) => `${t}: ${before[t]} -> ${after[t]}`),
    [],
    'a 4xx changes no table',
  );
}
