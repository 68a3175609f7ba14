import { useCallback, useEffect, useRef, useState } from 'react';
import { api } from './api';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  /** Fetches again, keeping the current data on screen meanwhile. */
  reload(): Promise<void>;
  setData(data: T): void;
}

/** GETs `path` (null: nothing to load yet) and keeps only the answer to the latest path. */
export function useApi<T>(path: string | null): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(path !== null);
  const latest = useRef(path);
  latest.current = path;

  const load = useCallback(async () => {
    if (path === null) return;
    setLoading(true);
    try {
      const answer = await api.get<T>(path);
      if (latest.current === path) {
        setData(answer);
        setError(undefined);
      }
    } catch (err) {
      if (latest.current === path) setError(err);
    } finally {
      if (latest.current === path) setLoading(false);
    }
  }, [path]);

  useEffect(() => {
    setData(undefined);
    setError(undefined);
    void load();
  }, [load]);

  return { data, error, loading, reload: load, setData };
}

/** Sets the document title for the page. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = title ? `${title} · Herald` : 'Herald';
  }, [title]);
}

/** The value once it has stopped changing for `ms`. */
export function useDebounced<T>(value: T, ms = 300): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/** Calls `tick` every `ms` while the tab is visible. */
export function useInterval(tick: () => void, ms: number, enabled = true): void {
  const saved = useRef(tick);
  saved.current = tick;
  useEffect(() => {
    if (!enabled) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') saved.current();
    }, ms);
    return () => clearInterval(timer);
  }, [ms, enabled]);
}

export interface Paged<T> {
  items: T[];
  error: unknown;
  loading: boolean;
  hasMore: boolean;
  /** Everything from the answer of the first page (e.g. a segment's `count`). */
  first: Record<string, unknown> | undefined;
  more(): Promise<void>;
  reload(): Promise<void>;
}

/**
 * Keyset paging (`?limit=&cursor=` → `{items, nextCursor}`): the first page of `path`, then
 * each next page appended by more(). A new path starts over.
 */
export function usePaged<T>(path: string | null, limit = 50): Paged<T> {
  const [items, setItems] = useState<T[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [first, setFirst] = useState<Record<string, unknown> | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(path !== null);
  const latest = useRef(path);
  latest.current = path;

  const page = useCallback(
    async (after: string | null) => {
      if (path === null) return;
      const sep = path.includes('?') ? '&' : '?';
      const url = `${path}${sep}limit=${limit}${after ? `&cursor=${encodeURIComponent(after)}` : ''}`;
      setLoading(true);
      try {
        const answer = await api.get<{ items: T[]; nextCursor?: string | null } & Record<string, unknown>>(url);
        if (latest.current !== path) return;
        setItems((current) => (after ? [...current, ...answer.items] : answer.items));
        setCursor(answer.nextCursor ?? null);
        if (!after) setFirst(answer);
        setError(undefined);
      } catch (err) {
        if (latest.current === path) setError(err);
      } finally {
        if (latest.current === path) setLoading(false);
      }
    },
    [path, limit],
  );

  useEffect(() => {
    setItems([]);
    setCursor(null);
    setFirst(undefined);
    void page(null);
  }, [page]);

  return { items, error, loading, hasMore: cursor !== null, first, more: () => page(cursor), reload: () => page(null) };
}
