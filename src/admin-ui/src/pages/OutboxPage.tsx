import { Link, useSearchParams } from 'react-router';
import { query } from '../api';
import { CHANNEL_UI } from '../channels/registry';
import { Badge } from '../components/Badge';
import { PageHeader } from '../components/PageHeader';
import { EmptyState, ErrorState, Loading } from '../components/States';
import { Table } from '../components/Table';
import { formatDateTime } from '../format';
import { useApi, usePaged } from '../hooks';
import type { Campaign, OutboxItem } from '../types';

export function OutboxPage() {
  const [params, setParams] = useSearchParams();
  const campaignId = params.get('campaignId') ?? '';
  const campaigns = useApi<{ items: Campaign[] }>('/campaigns');
  const names = new Map((campaigns.data?.items ?? []).map((c) => [c.id, c.name]));
  const messages = usePaged<OutboxItem>(`/outbox${query({ campaignId })}`);

  return (
    <>
      <PageHeader
        title="Outbox"
        description="With no SMTP server or WhatsApp account configured, messages are kept here instead of being sent, so the whole flow can be tried on a fresh machine."
        actions={
          <button type="button" className="button" onClick={() => void messages.reload()}>
            Refresh
          </button>
        }
      />
      <div className="card filters">
        <div className="field">
          <label htmlFor="outbox-campaign">Campaign</label>
          <select id="outbox-campaign" value={campaignId} onChange={(e) => setParams(e.target.value ? { campaignId: e.target.value } : {})}>
            <option value="">All campaigns</option>
            {(campaigns.data?.items ?? []).map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
            {campaignId && !names.has(campaignId) && <option value={campaignId}>{campaignId}</option>}
          </select>
        </div>
      </div>
      {messages.error ? (
        <ErrorState error={messages.error} onRetry={messages.reload} />
      ) : messages.loading && messages.items.length === 0 ? (
        <Loading />
      ) : messages.items.length === 0 ? (
        <EmptyState title={campaignId ? 'No messages for this campaign' : 'The outbox is empty'}>
          <p>Trigger an active campaign through the API, or send a test from a campaign's page: the message shows up here.</p>
        </EmptyState>
      ) : (
        <>
          <Table
            caption="Outbox messages"
            rows={messages.items}
            rowKey={(m) => m.id}
            columns={[
              {
                header: 'Subject',
                cell: (m) => (
                  <Link to={`/outbox/${encodeURIComponent(m.id)}`} className="strong-link">
                    {m.subject || CHANNEL_UI[m.channel].untitled.list}
                  </Link>
                ),
              },
              { header: 'To', cell: (m) => m.to },
              { header: 'Channel', cell: (m) => <Badge tone={CHANNEL_UI[m.channel].tone}>{CHANNEL_UI[m.channel].label}</Badge> },
              {
                header: 'Campaign',
                cell: (m) =>
                  m.campaignId ? (
                    <Link to={`/campaigns/${encodeURIComponent(m.campaignId)}`}>{names.get(m.campaignId) ?? m.campaignId}</Link>
                  ) : (
                    <span className="muted">—</span>
                  ),
              },
              { header: 'Kept at', className: 'nowrap', cell: (m) => formatDateTime(m.createdAt) },
            ]}
          />
          {messages.hasMore && (
            <div className="pager">
              <button type="button" className="button" onClick={() => void messages.more()} disabled={messages.loading}>
                {messages.loading ? 'Loading…' : 'Load more'}
              </button>
            </div>
          )}
        </>
      )}
    </>
  );
}
