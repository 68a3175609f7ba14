import { Link } from 'react-router';
import { PageHeader } from '../components/PageHeader';
import { EmptyState, ErrorState, Loading } from '../components/States';
import { Table } from '../components/Table';
import { formatDate, formatNumber } from '../format';
import { useApi } from '../hooks';
import type { SegmentListItem } from '../types';
import { describeCriteria } from './segment/criteria';

export function SegmentsPage() {
  const segments = useApi<{ items: SegmentListItem[] }>('/segments');
  const items = segments.data?.items ?? [];
  const newButton = (
    <Link to="/segments/new" className="button button--primary">
      New segment
    </Link>
  );
  return (
    <>
      <PageHeader
        title="Segments"
        description="Groups of contacts by what they did or did not do (events), their tags, field values and KPI totals."
        actions={items.length > 0 && newButton}
      />
      {segments.error ? (
        <ErrorState error={segments.error} onRetry={segments.reload} />
      ) : !segments.data ? (
        <Loading />
      ) : items.length === 0 ? (
        <EmptyState title="No segments yet" action={newButton}>
          <p>For example: contacts with a “purchase” event in the last 30 days whose metadata “plan” is “pro”, tagged “newsletter”.</p>
        </EmptyState>
      ) : (
        <Table
          caption="Segments"
          rows={items}
          rowKey={(s) => s.id}
          columns={[
            {
              header: 'Name',
              cell: (s) => (
                <Link to={`/segments/${encodeURIComponent(s.id)}`} className="strong-link">
                  {s.name}
                </Link>
              ),
            },
            { header: 'Contacts who have', cell: (s) => <span className="muted">{describeCriteria(s.criteria)}</span> },
            {
              header: 'Contacts',
              className: 'nowrap numeric',
              cell: (s) => <span title={`Counted ${formatDate(s.countedAt)}`}>{formatNumber(s.count)}</span>,
            },
            { header: 'Created', className: 'nowrap', cell: (s) => formatDate(s.createdAt) },
          ]}
        />
      )}
    </>
  );
}
