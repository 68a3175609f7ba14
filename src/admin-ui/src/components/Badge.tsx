import type { ReactNode } from 'react';

export type Tone = 'green' | 'gray' | 'red' | 'amber' | 'blue' | 'violet';

export function Badge({ tone = 'gray', children, dot = false }: { tone?: Tone; children: ReactNode; dot?: boolean }) {
  return (
    <span className={`badge badge--${tone}`}>
      {dot && <span className="badge__dot" aria-hidden="true" />}
      {children}
    </span>
  );
}

/** Send statuses as the statistics name them. */
export function SendStatus({ status }: { status: string }) {
  const tone: Tone =
    status === 'sent'
      ? 'green'
      : status === 'error' || status === 'failed'
        ? 'red'
        : status === 'rejected' || status === 'optout'
          ? 'amber'
          : status === 'cancelled'
            ? 'gray'
            : 'blue';
  return <Badge tone={tone}>{status}</Badge>;
}

export function Tags({ tags }: { tags: string[] }) {
  if (tags.length === 0) return <span className="muted">—</span>;
  return (
    <ul className="chips" aria-label="Tags">
      {tags.map((t) => (
        <li key={t} className="chip">
          {t}
        </li>
      ))}
    </ul>
  );
}
