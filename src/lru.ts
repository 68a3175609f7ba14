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
