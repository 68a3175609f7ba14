import { Link, useLocation } from 'react-router';
import { CHANNEL_UI } from '../channels/registry';
import { Badge } from '../components/Badge';
import { PageHeader } from '../components/PageHeader';
import { EmptyState, ErrorState, Loading } from '../components/States';
import { Table } from '../components/Table';
import { formatDateTime } from '../format';
import { useApi } from '../hooks';
import type { Campaign } from '../types';

export function triggerSummary(c: Pick<Campaign, 'schedule' | 'mode' | 'delaySeconds'>): string {
  if (c.schedule !== 'api') return 'Manual';
  return c.mode === 'delay' ? `API trigger, after ${c.delaySeconds} s` : 'API trigger, immediate';
}

export function CampaignsPage() {
  const campaigns = useApi<{ items: Campaign[] }>('/campaigns');
  // Set by the campaign page after a delete.
  const notice = (useLocation().state as { notice?: string } | null)?.notice;
  const items = campaigns.data?.items ?? [];
  const newButton = (
    <Link to="/campaigns/new" className="button button--primary">
      New campaign
    </Link>
  );
  return (
    <>
      <PageHeader
        title="Campaigns"
        description="Single-recipient messages your back end triggers through the API, by email or WhatsApp."
        actions={items.length > 0 && newButton}
      />
      {notice && (
        <p className="alert alert--success" role="status">
          {notice}
        </p>
      )}
      {campaigns.error ? (
        <ErrorState error={campaigns.error} onRetry={campaigns.reload} />
      ) : !campaigns.data ? (
        <Loading />
      ) : items.length === 0 ? (
        <EmptyState title="No campaigns yet" action={newButton}>
          <p>
            Create a campaign, write its message, activate it, then trigger it from your back end with POST /api/campaigns/trigger and the
            campaign's id.
          </p>
        </EmptyState>
      ) : (
        <Table
          caption="Campaigns"
          rows={items}
          rowKey={(c) => c.id}
          columns={[
            {
              header: 'Name',
              cell: (c) => (
                <Link to={`/campaigns/${encodeURIComponent(c.id)}`} className="strong-link">
                  {c.name}
                </Link>
              ),
            },
            { header: 'Channel', cell: (c) => <Badge tone={CHANNEL_UI[c.channel].tone}>{CHANNEL_UI[c.channel].label}</Badge> },
            { header: 'Trigger', cell: (c) => triggerSummary(c) },
            {
              header: 'Status',
              cell: (c) => (
                <Badge tone={c.active ? 'green' : 'gray'} dot>
                  {c.active ? 'Active' : 'Inactive'}
                </Badge>
              ),
            },
            { header: 'Id', cell: (c) => <code className="id">{c.id}</code> },
            { header: 'Updated', className: 'nowrap', cell: (c) => formatDateTime(c.updatedAt) },
          ]}
        />
      )}
    </>
  );
}
