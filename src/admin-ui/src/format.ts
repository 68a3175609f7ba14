const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const numbers = new Intl.NumberFormat();

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateTime.format(date);
}

const withSeconds = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** Date and time to the second (webhook attempts, where retries are seconds apart). */
export function formatTimestamp(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : withSeconds.format(date);
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateOnly.format(date);
}

export function formatNumber(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : numbers.format(value);
}

/** A field or metadata value as short text. */
export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** yyyy-mm-dd of a local date. */
export function isoDay(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** One month from today, as the key form proposes (clamped: 31 Jan + 1 month = 28/29 Feb). */
export function oneMonthFromToday(today = new Date()): string {
  const target = new Date(today.getFullYear(), today.getMonth() + 1, 1);
  const lastDay = new Date(target.getFullYear(), target.getMonth() + 1, 0).getDate();
  target.setDate(Math.min(today.getDate(), lastDay));
  return isoDay(target);
}

/** A chosen expiry day means the end of that day, UTC (as the CLI reads a date). */
export function endOfDayUtc(day: string): string {
  return `${day}T23:59:59.999Z`;
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${numbers.format(count)} ${count === 1 ? one : many}`;
}
