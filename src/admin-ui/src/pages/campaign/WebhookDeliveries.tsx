import { Badge, type Tone } from '../../components/Badge';
import { EmptyState, ErrorState, Loading } from '../../components/States';
import { formatDateTime, formatTimestamp } from '../../format';
import { useApi, useInterval } from '../../hooks';
import type { WebhookDelivery } from '../../types';

const TONE: Record<string, Tone> = {
  delivered: 'green',
  succeeded: 'green',
  success: 'green',
  failed: 'red',
  pending: 'blue',
  retrying: 'amber',
};

/** Each webhook delivery of the campaign's sends, with every attempt (time, answer, duration). */
export function WebhookDeliveries({ campaignId, hasWebhooks }: { campaignId: string; hasWebhooks: boolean }) {
  const deliveries = useApi<{ items: WebhookDelivery[] }>(`/campaigns/${encodeURIComponent(campaignId)}/webhook-deliveries`);
  useInterval(() => void deliveries.reload(), 10_000, !deliveries.error);
  if (deliveries.error) return <ErrorState error={deliveries.error} onRetry={deliveries.reload} />;
  if (!deliveries.data) return <Loading />;
  const items = deliveries.data.items;
  if (items.length === 0) {
    return (
      <EmptyState title="No webhook deliveries yet">
        <p>
          {hasWebhooks
            ? 'Each send of this campaign posts the contact to its webhooks; the deliveries and their attempts show here.'
            : 'This campaign has no webhooks. Add up to 3 in its settings.'}
        </p>
      </EmptyState>
    );
  }
  return (
    <div className="stack">
      <div className="toolbar">
        <p className="muted">{items.length === 1 ? '1 delivery' : `${items.length} deliveries`}, newest first.</p>
        <button type="button" className="button button--small" onClick={() => void deliveries.reload()}>
          Refresh
        </button>
      </div>
      <ul className="deliveries">
        {items.map((d) => {
          const last = d.attempts[d.attempts.length - 1];
          return (
            <li key={d.id} className="card delivery">
              <div className="delivery__head">
                <Badge tone={TONE[d.status] ?? 'gray'}>{d.status}</Badge>
                <code className="delivery__url">{d.url}</code>
                <span className="muted small">{d.createdAt ? formatDateTime(d.createdAt) : last ? formatDateTime(last.at) : ''}</span>
              </div>
              <p className="muted small">
                Message id <code>{d.messageId}</code>
                {d.nextAttemptAt && <> · next attempt {formatDateTime(d.nextAttemptAt)}</>}
              </p>
              <details>
                <summary>{d.attempts.length === 1 ? '1 attempt' : `${d.attempts.length} attempts`}</summary>
                {d.attempts.length === 0 ? (
                  <p className="muted">Not attempted yet.</p>
                ) : (
                  <table className="table table--compact">
                    <thead>
                      <tr>
                        <th scope="col">At</th>
                        <th scope="col">Answer</th>
                        <th scope="col" className="num">
                          Duration
                        </th>
                        <th scope="col">Error</th>
                      </tr>
                    </thead>
                    <tbody>
                      {d.attempts.map((a, i) => (
                        <tr key={i}>
                          <td className="nowrap">{formatTimestamp(a.at)}</td>
                          <td>
                            {a.statusCode ? (
                              <Badge tone={a.statusCode < 300 ? 'green' : 'red'}>{a.statusCode}</Badge>
                            ) : (
                              <span className="muted">no answer</span>
                            )}
                          </td>
                          <td className="num">{a.durationMs !== null && a.durationMs !== undefined ? `${a.durationMs} ms` : '—'}</td>
                          <td>{a.error ?? <span className="muted">—</span>}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                )}
              </details>
              {d.payload !== undefined && (
                <details>
                  <summary>Payload</summary>
                  <pre className="pre">{JSON.stringify(d.payload, null, 2)}</pre>
                </details>
              )}
            </li>
          );
        })}
      </ul>
    </div>
  );
}
