/** Times are stored as epoch milliseconds and shown as ISO 8601 UTC with milliseconds. */
export const iso = (ms: number): string => new Date(ms).toISOString();
export const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));
