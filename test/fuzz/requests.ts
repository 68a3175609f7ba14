import fc from 'fast-check';
import type { FuzzRequest } from './harness.js';
import { anyValueArb, type JsonTree, keyArb, leafArb, ODD_STRINGS, obj, toJsonText } from './json-text.js';
import type { Route } from './routes.js';

export interface RouteCase {
  route: Route;
  method: string;
  request: FuzzRequest;
  credentials: string;
}

export interface RequestSpace {
  routes: Route[];
  /** A valid body per `METHOD url`, mutated by the generator; other routes start from `{}`. */
  bodies: Record<string, JsonTree>;
  /** A valid query per `METHOD url` (GET forms). */
  queries: Record<string, [string, string][]>;
  /** Real ids (this tenant's, another tenant's) for path parameters and id members. */
  ids: string[];
  /** Names of the credentials a request may carry; the test turns a name into headers and query entries when it sends. */
  credentials: string[];
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'];

const CONTENT_TYPES = [
  'application/json; charset=latin1',
  'application/JSON',
  'application/json;',
  'application/json; charset=utf-16',
  'text/plain',
  'text/html',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  'application/vnd.api+json',
  'application/json-patch+json',
  '*/*',
  'json',
  ';;;',
  'application/json, text/plain',
  'application/json; boundary=";"',
  'application/problem+json',
];

const RAW_BODIES = [
  '',
  ' ',
  'null',
  '[]',
  '"x"',
  '1',
  '-0',
  '1e309',
  'true',
  '\ufeff{}',
  '{"a":1}x',
  '{',
  '{"a":}',
  "{'a':1}",
  '{"a":1,}',
  'NaN',
  '\u0000',
  'a=1&b=2',
  '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--',
  '{"__proto__":{"isAdmin":true}}',
  '{"constructor":{"prototype":{"isAdmin":true}}}',
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
  '[{}]',
  '{"a":1}{"b":2}',
];

/** Percent-encodes every byte outside the unreserved set (a lone surrogate becomes U+FFFD's bytes). */
export function percentEncode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const oddTextArb = fc.oneof(fc.constantFrom(...ODD_STRINGS), fc.string({ unit: 'binary', maxLength: 30 }));
/** Path and query pieces that are not valid percent-encoding, or that mean something to a router. */
const RAW_URL_PIECES = ['%', '%0', '%zz', '%E0%A4%A', '%C0%AF', '%00', '..', '.', '%2F', '%2e%2e', '%252F', '+', '%20', 'a'.repeat(2000)];

function pathParamArb(ids: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...ids).map(percentEncode) },
    { weight: 2, arbitrary: oddTextArb.map(percentEncode) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_URL_PIECES) },
  );
}

type QueryEntry = [string] | [string, string];

function mutateQueryArb(base: [string, string][], ids: string[]): fc.Arbitrary<QueryEntry[]> {
  const valueArb = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...ids).map(percentEncode) },
    { weight: 3, arbitrary: oddTextArb.map(percentEncode) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_URL_PIECES) },
  );
  const nameArb = fc.oneof(fc.constantFrom(...base.map(([k]) => k), 'api-key', 'limit', 'cursor', 'q'), keyArb.map(percentEncode));
  const op = fc.oneof(
    fc.record({ kind: fc.constant('set' as const), name: nameArb, value: valueArb }),
    fc.record({ kind: fc.constant('drop' as const), index: fc.nat() }),
    // Array-valued parameters: the same name twice, name[] and name[0], or a name without a value.
    fc.record({
      kind: fc.constant('repeat' as const),
      index: fc.nat(),
      value: valueArb,
      shape: fc.constantFrom('same', '[]', '[0]', '[a]', 'bare'),
    }),
  );
  return fc.array(op, { maxLength: 3 }).map((ops) => {
    const entries: QueryEntry[] = base.map(([k, v]) => [percentEncode(k), percentEncode(v)]);
    for (const o of ops) {
      if (o.kind === 'set') {
        const at = entries.findIndex(([k]) => k === o.name);
        if (at >= 0) entries[at] = [o.name, o.value];
        else entries.push([o.name, o.value]);
      } else if (entries.length > 0) {
        const at = o.index % entries.length;
        if (o.kind === 'drop') entries.splice(at, 1);
        else {
          const name = entries[at]![0];
          if (o.shape === 'bare') entries.push([name]);
          else if (o.shape === 'same') entries.push([name, o.value]);
          else entries.push([name + percentEncode(o.shape), o.value]);
        }
      }
    }
    return entries;
  });
}

/** A valid body with one to three members set to odd values, dropped, or sent twice. */
function mutateBodyArb(base: JsonTree): fc.Arbitrary<JsonTree> {
  const op = fc.record({
    kind: fc.constantFrom('set', 'drop', 'duplicate', 'nested', 'keep'),
    index: fc.nat(),
    key: keyArb,
    // Odd leaves (NUL, -0, 1e309, huge strings) in place of a member, as often as structures.
    value: fc.oneof(anyValueArb, leafArb),
  });
  return fc.array(op, { minLength: 1, maxLength: 3 }).map((ops) => {
    let tree = base;
    for (const o of ops) tree = applyOp(tree, o);
    return tree;
  });
}

function applyOp(tree: JsonTree, o: { kind: string; index: number; key: string; value: JsonTree }): JsonTree {
  if (tree.kind !== 'obj') return tree;
  const entries = [...tree.entries];
  const at = entries.length > 0 ? o.index % entries.length : -1;
  switch (o.kind) {
    case 'set':
      if (at >= 0 && o.index % 2 === 0) entries[at] = [entries[at]![0], o.value];
      else entries.push([o.key, o.value]);
      break;
    case 'drop':
      if (at >= 0) entries.splice(at, 1);
      break;
    case 'duplicate':
      if (at >= 0) entries.push([entries[at]![0], o.value]);
      break;
    case 'nested':
      if (at >= 0) entries[at] = [entries[at]![0], applyOp(entries[at]![1], { ...o, kind: 'set', index: o.index >> 1 })];
      break;
  }
  return obj(entries);
}

interface BodyChoice {
  bytes?: Buffer;
  contentType?: string;
  chunked: boolean;
}

function bodyArb(base: JsonTree): fc.Arbitrary<BodyChoice> {
  const json = (tree: JsonTree) => Buffer.from(toJsonText(tree), 'utf8');
  const bytes = fc.oneof(
    { weight: 8, arbitrary: mutateBodyArb(base).map(json) },
    { weight: 1, arbitrary: fc.constant(json(base)) },
    { weight: 2, arbitrary: anyValueArb.map(json) },
    {
      weight: 2,
      arbitrary: fc.oneof(fc.constantFrom(...RAW_BODIES), fc.string({ unit: 'binary', maxLength: 50 })).map((s) => Buffer.from(s, 'utf8')),
    },
    // Not UTF-8 at all, inside an otherwise well-formed JSON string.
    {
      weight: 1,
      arbitrary: fc.uint8Array({ maxLength: 16 }).map((b) => Buffer.concat([Buffer.from('{"name":"'), Buffer.from(b), Buffer.from('"}')])),
    },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
  const contentType = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom('application/json', 'application/json; charset=utf-8') },
    { weight: 3, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
  // One body in ten goes chunked, without a content-length.
  const chunked = fc.nat({ max: 9 }).map((n) => n === 0);
  return fc.record({ bytes, contentType, chunked }).map((c) => ({ ...c, chunked: c.chunked && c.bytes !== undefined }));
}

/** One generated request to one of the space's routes (or a wrong method on its path). */
export function routeCaseArb(space: RequestSpace): fc.Arbitrary<RouteCase> {
  const routeArb = fc.oneof(...space.routes.map((route) => ({ weight: route.weight ?? 3, arbitrary: fc.constant(route) })));
  return routeArb.chain((route) => {
    const key = `${route.method} ${route.url}`;
    const paramCount = (route.url.match(/:[^/]+/g) ?? []).length;
    return fc
      .record({
        method: fc.oneof({ weight: 9, arbitrary: fc.constant(route.method) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
        params: fc.array(pathParamArb(space.ids), { minLength: paramCount, maxLength: paramCount }),
        query: mutateQueryArb(space.queries[key] ?? [], space.ids),
        body: bodyArb(space.bodies[key] ?? obj([])),
        credentials: fc.constantFrom(...space.credentials),
      })
      .map(({ method, params, query, body, credentials }) => {
        let i = 0;
        const path = route.url.replace(/:[^/]+/g, () => params[i++]!);
        const search = query.map((e) => (e.length === 1 ? e[0] : `${e[0]}=${e[1]}`)).join('&');
        const headers: Record<string, string> = {};
        if (body.contentType !== undefined) headers['content-type'] = body.contentType;
        const request: FuzzRequest = {
          method,
          path: search ? `${path}?${search}` : path,
          headers,
          // GET, HEAD and OPTIONS carry no body here (Node refuses a body on HEAD, and so do proxies in practice).
          body: ['GET', 'HEAD', 'OPTIONS'].includes(method) ? undefined : body.bytes,
          chunked: body.chunked,
        };
        // fast-check prints a failing case with this: short, since a body may be 200 KB.
        const show = () =>
          `${credentials}: ${method} ${request.path.slice(0, 300)} ${JSON.stringify(request.headers)} body ${request.body === undefined ? '(none)' : JSON.stringify(request.body.toString('utf8').slice(0, 300))}`;
        return { route, method, request, credentials, [fc.toStringMethod]: show };
      });
  });
}
