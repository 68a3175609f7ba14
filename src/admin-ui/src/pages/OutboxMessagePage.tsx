import { Link, useParams } from 'react-router';
import { CHANNEL_UI } from '../channels/registry';
import { Badge } from '../components/Badge';
import { MessageFrame } from '../components/MessageFrame';
import { PageHeader } from '../components/PageHeader';
import { ErrorState, Loading } from '../components/States';
import { formatDateTime } from '../format';
import { useApi } from '../hooks';
import type { OutboxMessage } from '../types';

/**
 * One kept message. Its HTML comes untracked from the server (no open pixel, original links), so
 * viewing a message never counts an open or a click, and is shown in the message frame.
 */
export function OutboxMessagePage() {
  const { id = '' } = useParams();
  const message = useApi<OutboxMessage>(`/outbox/${encodeURIComponent(id)}`);
  const back = (
    <Link to="/outbox" className="back-link">
      ← Outbox
    </Link>
  );
  if (message.error) {
    return (
      <>
        {back}
        <ErrorState page error={message.error} onRetry={message.reload} />
      </>
    );
  }
  if (!message.data) return <Loading />;
  const m = message.data;
  const headers = Object.entries(m.headers ?? {});
  return (
    <>
      {back}
      <PageHeader
        title={m.subject || CHANNEL_UI[m.channel].untitled.page}
        documentTitle="Outbox message"
        meta={<Badge tone={CHANNEL_UI[m.channel].tone}>{CHANNEL_UI[m.channel].label}</Badge>}
      />
      <section className="card" aria-label="Envelope">
        <dl className="props props--inline">
          <div className="props__row">
            <dt>From</dt>
            <dd>{m.from ?? '—'}</dd>
          </div>
          <div className="props__row">
            <dt>To</dt>
            <dd>{m.to}</dd>
          </div>
          <div className="props__row">
            <dt>Kept at</dt>
            <dd>{formatDateTime(m.createdAt)}</dd>
          </div>
          {m.campaignId && (
            <div className="props__row">
              <dt>Campaign</dt>
              <dd>
                <Link to={`/campaigns/${encodeURIComponent(m.campaignId)}`}>{m.campaignId}</Link>
              </dd>
            </div>
          )}
          {m.sendId && (
            <div className="props__row">
              <dt>Send</dt>
              <dd>
                <code>{m.sendId}</code>
              </dd>
            </div>
          )}
        </dl>
      </section>
      {m.html && (
        <section className="card" aria-labelledby="html-title">
          <h2 id="html-title">HTML</h2>
          <MessageFrame title="Message HTML" className="message-frame" html={m.html} />
        </section>
      )}
      {m.text && (
        <section className="card" aria-labelledby="text-title">
          <h2 id="text-title">Plain text</h2>
          <pre className="pre">{m.text}</pre>
        </section>
      )}
      {m.payload !== null && m.payload !== undefined && (
        <section className="card" aria-labelledby="payload-title">
          <h2 id="payload-title">{CHANNEL_UI[m.channel].payloadTitle}</h2>
          <pre className="pre">{JSON.stringify(m.payload, null, 2)}</pre>
        </section>
      )}
      {headers.length > 0 && (
        <section className="card">
          <details>
            <summary>Headers ({headers.length})</summary>
            <dl className="props props--code">
              {headers.map(([k, v]) => (
                <div className="props__row" key={k}>
                  <dt>{k}</dt>
                  <dd>{String(v)}</dd>
                </div>
              ))}
            </dl>
          </details>
        </section>
      )}
    </>
  );
}
