/**
 * Counts shown in the segment list, kept for a minute (docs/decisions.md, Segments that lead
 * somewhere): one count reads up to every contact or every event of a type, so a list of many
 * segments counted afresh on every visit would take seconds on a large account. A count is
 * keyed by the segment and its last change, so an edited segment is counted again at once;
 * new contacts and events show within COUNT_TTL_MS. Each process keeps its own.
 */
export const COUNT_TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

/** A count, when it was made, and how long it took (ms: the next count of the same segment is ordered by it). */
interface Kept {
  count: number;
  countedAt: number;
  took: number;
}

const counts = new Map<string, Kept>();

type CountKey = { accountId: string; segmentId: string; updatedAt: string; criteria: unknown };
const idOf = (key: CountKey) => `${key.accountId} ${key.segmentId} ${key.updatedAt} ${JSON.stringify(key.criteria)}`;

/**
 * The segments' counts, those from the last minute as kept and the others counted now, all
 * at once, by `countAll` (given the positions of the keys to count, it answers their counts
 * and how long each took, in that order).
 *
 * The positions come longest first, as each segment's count took the last time (never counted:
 * first of all), so that a caller counting a few at a time in that order starts the longest
 * counts first: with two at a time, a long count started last would finish alone, after
 * every other (the list of six measured 413 ms p50 on PostgreSQL started in the list's order,
 * for counts adding up to 543 ms).
 */
export async function recentCounts(
  keys: CountKey[],
  now: number,
  countAll: (missing: number[]) => Promise<{ count: number; took: number }[]>,
): Promise<{ count: number; countedAt: number }[]> {
  const ids = keys.map(idOf);
  const kept = ids.map((id) => counts.get(id));
  const found = kept.map((entry) => (entry && now - entry.countedAt < COUNT_TTL_MS ? entry : undefined));
  const tookBefore = (i: number) => kept[i]?.took ?? Number.POSITIVE_INFINITY;
  const missing = found.flatMap((entry, i) => (entry ? [] : [i])).sort((a, b) => descending(tookBefore(a), tookBefore(b)));
  if (missing.length === 0) return found as { count: number; countedAt: number }[];
  const fresh = await countAll(missing);
  missing.forEach((at, i) => {
    const entry = { count: fresh[i]!.count, countedAt: now, took: fresh[i]!.took };
    const id = ids[at]!;
    counts.delete(id);
    counts.set(id, entry);
    found[at] = entry;
  });
  // Oldest first in a Map: the bound drops the counts least recently made.
  while (counts.size > MAX_ENTRIES) counts.delete(counts.keys().next().value!);
  return found as { count: number; countedAt: number }[];
}

/**
 * Makes every kept count too old to show, as a visit after the minute finds them: the next list
 * counts each afresh, longest first as they took (the benchmark measures that list with it).
 */
export function expireCounts(): void {
  // New entries, in place in the Map's order: a list under way keeps the ones it was given.
  for (const [id, kept] of counts) counts.set(id, { ...kept, countedAt: Number.NEGATIVE_INFINITY });
}

/** For sort: larger first, and never NaN (two counts never made both took Infinity). */
const descending = (a: number, b: number) => (a === b ? 0 : a > b ? -1 : 1);
