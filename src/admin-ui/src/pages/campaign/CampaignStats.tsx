import { useId, useState } from 'react';
import { LineChart } from '../../components/Chart';
import { ErrorState, Loading } from '../../components/States';
import { formatNumber } from '../../format';
import { useApi, useInterval } from '../../hooks';
import type { LinkClicks, CampaignStats as Stats, StatsDay } from '../../types';

const SERIES = [
  { key: 'sent', label: 'Sent', color: '#4f46e5' },
  { key: 'delivered', label: 'Delivered', color: '#0d9488' },
  { key: 'opens', label: 'Opens', color: '#d97706' },
  { key: 'clicks', label: 'Clicks', color: '#db2777' },
  { key: 'error', label: 'Error', color: '#dc2626' },
];

const REFRESH_MS = 5000;

/** Totals and the daily chart, refreshed every few seconds so triggers show as they happen. */
export function CampaignStats({ campaignId }: { campaignId: string }) {
  const [days, setDays] = useState(30);
  const selectId = useId();
  const stats = useApi<Stats>(`/campaigns/${encodeURIComponent(campaignId)}/stats?days=${days}`);
  const [updatedAt, setUpdatedAt] = useState(() => new Date());
  useInterval(() => void stats.reload().then(() => setUpdatedAt(new Date())), REFRESH_MS, !stats.error);

  if (stats.error) return <ErrorState error={stats.error} onRetry={stats.reload} />;
  if (!stats.data) return <Loading />;
  const t = stats.data.totals;
  const rate = (part: number, whole: number) => (whole > 0 ? `${Math.round((part / whole) * 100)}%` : '—');

  return (
    <div className="stack">
      <div className="toolbar">
        <p className="muted" aria-live="off">
          Updates every {REFRESH_MS / 1000} s · last at {updatedAt.toLocaleTimeString()}
        </p>
        <div className="toolbar__right">
          <label htmlFor={selectId}>Period</label>
          <select id={selectId} value={days} onChange={(e) => setDays(Number(e.target.value))}>
            <option value={7}>Last 7 days</option>
            <option value={30}>Last 30 days</option>
            <option value={90}>Last 90 days</option>
          </select>
          <button type="button" className="button button--small" onClick={() => void stats.reload().then(() => setUpdatedAt(new Date()))}>
            Refresh
          </button>
        </div>
      </div>

      <section aria-label="Send results" className="stat-grid">
        <Stat label="Sent" value={t.sent} tone="indigo" />
        <Stat label="Rejected" value={t.rejected} tone="amber" note="Already received, re-entry off" />
        <Stat label="Optout" value={t.optout} tone="amber" note="Contact opted out" />
        <Stat label="Error" value={t.error} tone="red" note={t.bounced > 0 ? `${formatNumber(t.bounced)} bounced` : undefined} />
      </section>
      <section aria-label="Delivery and engagement" className="stat-grid">
        <Stat label="Processed" value={t.processed} note="Handed to the channel" />
        <Stat label="Delivered" value={t.delivered} note={`${rate(t.delivered, t.processed)} of processed`} />
        <Stat label="Opens" value={t.opens} note={`${formatNumber(t.uniqueOpens)} unique · ${rate(t.uniqueOpens, t.delivered)}`} />
        <Stat label="Clicks" value={t.clicks} note={`${formatNumber(t.uniqueClicks)} unique · ${rate(t.uniqueClicks, t.delivered)}`} />
        <Stat label="Bounced" value={t.bounced} note="Address refused; later sends to it are suppressed" />
        <Stat label="Unsubscribes" value={t.unsubscribes} note={`Through this campaign · ${rate(t.unsubscribes, t.delivered)}`} />
      </section>
      <p className="muted small">
        Waiting: {formatNumber(t.pending)} pending (delayed) · {formatNumber(t.queued)} queued · {formatNumber(t.cancelled)} cancelled
      </p>

      <section className="card">
        {stats.data.days.length === 0 ? (
          <p className="muted">No activity in this period.</p>
        ) : (
          <LineChart<StatsDay>
            title={`Over the last ${days} days`}
            rows={stats.data.days}
            series={SERIES}
            value={(row, key) => Number(row[key as keyof StatsDay]) || 0}
          />
        )}
      </section>

      <LinkTable links={stats.data.links} />
    </div>
  );
}

function Stat({ label, value, note, tone }: { label: string; value: number; note?: string; tone?: 'indigo' | 'amber' | 'red' }) {
  return (
    <div className={`stat${tone ? ` stat--${tone}` : ''}`}>
      <p className="stat__label">{label}</p>
      <p className="stat__value" data-stat={label.toLowerCase()}>
        {formatNumber(value)}
      </p>
      {note && <p className="stat__note">{note}</p>}
    </div>
  );
}

/** Clicks per link of the campaign's emails, the most clicked first. */
function LinkTable({ links }: { links: LinkClicks[] }) {
  const titleId = useId();
  return (
    <section className="card" aria-labelledby={titleId}>
      <div className="card__head">
        <h2 id={titleId}>Clicks per link</h2>
      </div>
      {links.length === 0 ? (
        <p className="muted">No clicks yet.</p>
      ) : (
        <div className="table-wrap">
          <table className="table table--compact" data-testid="link-clicks">
            <thead>
              <tr>
                <th scope="col">Link</th>
                <th scope="col" className="num">
                  Clicks
                </th>
                <th scope="col" className="num">
                  Unique
                </th>
              </tr>
            </thead>
            <tbody>
              {links.map((link) => (
                <tr key={link.url}>
                  <td className="link-url">{link.url}</td>
                  <td className="num">{formatNumber(link.clicks)}</td>
                  <td className="num">{formatNumber(link.uniqueClicks)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
