import { invalid } from '../errors.js';

/**
 * Keyset paging of the admin API: `?limit=N&cursor=C` answers `{items, nextCursor}`. A cursor
 * is the sort key of the last item given, opaque to the panel (base64url JSON), so a page
 * never skips or repeats rows while new ones arrive at the top.
 */
export interface Position {
  /** created_at of the last item, epoch ms. */
  at: number;
  id: string;
}

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 200;

export function encodeCursor(position: Position): string {
  return Buffer.from(JSON.stringify([position.at, position.id])).toString('base64url');
}

/** The position a cursor names; a cursor that was not made here is a 400 naming `/cursor`. */
export function decodeCursor(cursor: string | undefined): Position | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(value) && value.length === 2 && Number.isSafeInteger(value[0]) && typeof value[1] === 'string') {
      return { at: value[0] as number, id: value[1] };
    }
  } catch {
    // falls through to the refusal
  }
  throw invalid('/cursor', 'is not a cursor given by this API');
}

/**
 * The page and the cursor of the next one, from `limit + 1` rows read: the extra row only
 * says that there is more.
 */
export function pageOf<T>(rows: T[], limit: number, position: (row: T) => Position): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last !== undefined ? encodeCursor(position(last)) : null };
}

/** An ISO 8601 timestamp (or a date, meaning the end of that day UTC, as the CLI reads WHEN), as epoch ms. */
export function parseInstant(value: string, path: string): number {
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (day) {
    const [y, m, d] = [Number(day[1]), Number(day[2]), Number(day[3])];
    const end = Date.UTC(y, m - 1, d, 23, 59, 59, 999);
    if (new Date(end).getUTCDate() === d && new Date(end).getUTCMonth() === m - 1) return end;
  } else if (/^\d{4}-\d{2}-\d{2}T/.test(value)) {
    const at = Date.parse(value);
    if (!Number.isNaN(at)) return at;
  }
  throw invalid(path, 'must be an ISO 8601 timestamp (2026-12-31T23:59:59.000Z) or a date (2026-12-31)');
}
