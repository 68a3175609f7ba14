/** Times are stored as epoch milliseconds and shown as ISO 8601 UTC with milliseconds. */
export const iso = (ms: number): string => new Date(ms).toISOString();
export const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));

// RFC 3339's date-time (ISO 8601 with a time zone): seconds required, any fraction, `Z` or ±hh:mm.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/**
 * Epoch ms of an ISO 8601 date and time with a time zone (`2026-11-25T10:15:30Z`,
 * `2026-11-25T11:15:30.250+01:00`), or undefined. Strict: a real calendar date, hours 00–23,
 * no leap second, offsets within ±23:59, digits past the millisecond dropped. A time without a
 * zone is refused: it would mean a different instant on every server.
 */
export function parseDateTime(text: string): number | undefined {
  const m = DATE_TIME.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const millis = Number((m[7] ?? '').slice(0, 3).padEnd(3, '0'));
  const offsetMinutes = m[8] ? 0 : (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11]));
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59 || Number(m[11] ?? 0) > 59) return undefined;
  // setUTCFullYear, unlike Date.UTC, reads years 0–99 as they are.
  const local = new Date(0);
  local.setUTCFullYear(year, month - 1, day);
  local.setUTCHours(hour, minute, second, millis);
  // A day the month does not have (2026-02-30) rolls over into the next month: refused.
  if (local.getUTCDate() !== day) return undefined;
  return local.getTime() - offsetMinutes * 60_000;
}
