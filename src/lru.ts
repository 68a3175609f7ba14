/**
 * A Map used as a least-recently-used cache of at most `size` entries (a Map keeps insertion
 * order: the first key is the least recently used). Returns the cached value of `key`, making
 * and keeping it with `make` when absent.
 */
export function lruGet<K, V>(cache: Map<K, V>, size: number, key: K, make: () => V): V {
  let value = cache.get(key);
  if (value !== undefined) {
    cache.delete(key);
  } else {
    value = make();
    if (cache.size >= size) cache.delete(cache.keys().next().value!);
  }
  cache.set(key, value);
  return value;
}

/**
 * A cache of at most `size` entries whose hit is one Map lookup, for caches hit several times
 * per request (SQLite's prepared statements, db/connect.ts): lruGet's hit moves its entry to the
 * young end (a delete and a set, and the Map's periodic rebuild of the holes that leaves),
 * several times the lookup itself.
 *
 * Eviction is CLOCK, the second-chance approximation of least-recently-used: a hit only marks
 * its entry used; a miss that finds the cache full looks at the oldest entries in turn, gives
 * each one marked used a second chance (unmarked, moved to the young end) and drops the first
 * one that is not. So an entry used since it was last looked at is never dropped, and one used
 * once long ago is, as with LRU; what differs is only the order among entries used since.
 * Hot entries stay put while the cache is not full (Herald's statement texts are far fewer than
 * its size), and the cost of a miss stays bounded: each pass unmarks what it skips.
 */
export class ClockCache<K, V> {
  private readonly entries = new Map<K, { value: V; used: boolean }>();

  constructor(private readonly size: number) {}

  get(key: K, make: () => V): V {
    const entry = this.entries.get(key);
    if (entry !== undefined) {
      entry.used = true;
      return entry.value;
    }
    const value = make();
    if (this.entries.size >= this.size) this.dropOne();
    this.entries.set(key, { value, used: false });
    return value;
  }

  /** Whether `key` is kept (does not count as a use). */
  has(key: K): boolean {
    return this.entries.has(key);
  }

  private dropOne(): void {
    // Ends: after at most `size` second chances every entry is unmarked.
    for (;;) {
      const [key, entry] = this.entries.entries().next().value!;
      this.entries.delete(key);
      if (!entry.used) return;
      entry.used = false;
      this.entries.set(key, entry);
    }
  }
}

/**
 * The cached value of `key` in a Map of at most `size` entries that forgets everything at once
 * when full: for memos of pure functions whose keys are few in steady use (a purpose's signing
 * key, a sender's header, an address's verdict). A miss costs one `clear` now and then, where
 * evicting one entry at a time (lruGet) leaves holes at the Map's front that every later
 * eviction walks over (11–20 µs a miss at 10,000 entries, measured).
 */
export function memoUpTo<K, V>(cache: Map<K, V>, size: number, key: K, make: () => V): V {
  let value = cache.get(key);
  if (value === undefined && !cache.has(key)) {
    value = make();
    if (cache.size >= size) cache.clear();
    cache.set(key, value);
  }
  return value as V;
}
