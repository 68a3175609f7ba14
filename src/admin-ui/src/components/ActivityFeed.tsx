import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { formatDateTime, formatValue } from '../format';
import type { ActivityItem } from '../types';
import { Badge, SendStatus } from './Badge';

const KIND_LABEL: Record<string, string> = {
  event: 'Event',
  send: 'Send',
  note: 'Note',
  open: 'Open',
  click: 'Click',
  unsubscribe: 'Unsubscribe',
};

/** A contact's events, sends, notes, opens and clicks, newest first, as a timeline. */
export function ActivityFeed({ items, campaignNames }: { items: ActivityItem[]; campaignNames: Map<string, string> }) {
  const campaign = (id: unknown) =>
    typeof id === 'string' ? (
      <Link to={`/campaigns/${encodeURIComponent(id)}`}>{campaignNames.get(id) ?? id}</Link>
    ) : (
      <span className="muted">a campaign</span>
    );
  return (
    <ol className="feed">
      {items.map((item, i) => (
        <li key={`${item.at}-${i}`} className={`feed__item feed__item--${item.kind}`}>
          <span className="feed__dot" aria-hidden="true" />
          <div className="feed__body">
            <p className="feed__title">
              <span className="feed__kind">{KIND_LABEL[item.kind] ?? item.kind}</span>
              {describe(item, campaign)}
            </p>
            {details(item)}
            <p className="feed__time">
              <time dateTime={item.at}>{formatDateTime(item.at)}</time>
            </p>
          </div>
        </li>
      ))}
    </ol>
  );
}

function describe(item: ActivityItem, campaign: (id: unknown) => ReactNode) {
  const any = item as Record<string, unknown>;
  switch (item.kind) {
    case 'event':
      return (
        <>
          <code className="feed__type">{String(any.type)}</code>
          {any.value !== null && any.value !== undefined && <span className="feed__value">{String(any.value)}</span>}
        </>
      );
    case 'send':
      return (
        <>
          {campaign(any.campaignId)} <SendStatus status={String(any.status)} />
          {any.test === true && <Badge tone="violet">test</Badge>}
        </>
      );
    case 'note':
      return <span className="muted">by {String(any.createdBy ?? 'someone')}</span>;
    case 'open':
      return <>opened {campaign(any.campaignId)}</>;
    case 'unsubscribe':
      return <>unsubscribed through {campaign(any.campaignId)}</>;
    case 'click':
      return (
        <>
          clicked {typeof any.url === 'string' ? <span className="feed__value">{any.url}</span> : null} in {campaign(any.campaignId)}
        </>
      );
    default:
      return null;
  }
}

function details(item: ActivityItem) {
  const any = item as Record<string, unknown>;
  if (item.kind === 'note') return <p className="feed__note">{String(any.text)}</p>;
  if (item.kind !== 'event') return null;
  const metadata = (any.metadata ?? {}) as Record<string, unknown>;
  const entries = Object.entries(metadata);
  return (
    <>
      {typeof any.url === 'string' && any.url && <p className="feed__url">{any.url}</p>}
      {entries.length > 0 && (
        <dl className="feed__meta">
          {entries.map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>{formatValue(v)}</dd>
            </div>
          ))}
        </dl>
      )}
    </>
  );
}
