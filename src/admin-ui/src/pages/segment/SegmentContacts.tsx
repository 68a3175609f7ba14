import { Link } from 'react-router';
import { errorMessage } from '../../api';
import { Badge } from '../../components/Badge';
import { ErrorState, Loading } from '../../components/States';
import { formatNumber } from '../../format';
import { usePaged } from '../../hooks';
import type { ContactSummary } from '../../types';

export type PreviewState =
  | { state: 'idle' }
  | { state: 'loading' }
  | { state: 'error'; error: unknown }
  | { state: 'done'; count: number; items: ContactSummary[]; refreshing?: boolean };

/**
 * The count and the contacts: of the saved segment (paged) when there are no unsaved criteria,
 * otherwise of the live preview of the criteria being built.
 */
export function SegmentContacts({ segmentId, preview }: { segmentId: string | undefined; preview: PreviewState }) {
  return (
    <section
      className="card segment-result"
      aria-labelledby="segment-result-title"
      aria-live="polite"
      aria-busy={preview.state === 'loading'}
    >
      <h2 id="segment-result-title">Matching contacts</h2>
      {segmentId ? <SavedContacts segmentId={segmentId} /> : <Preview preview={preview} />}
    </section>
  );
}

function Preview({ preview }: { preview: PreviewState }) {
  if (preview.state === 'idle') return <p className="muted">Add a condition to see how many contacts match.</p>;
  if (preview.state === 'loading') return <Loading label="Counting…" />;
  if (preview.state === 'error') return <p className="field__error">{errorMessage(preview.error)}: correct the highlighted condition.</p>;
  return (
    <>
      <Count count={preview.count} note="Preview of the unsaved criteria" />
      <ContactList items={preview.items} />
      {preview.count > preview.items.length && (
        <p className="muted small">Showing the first {preview.items.length}. Save the segment to page through all of them.</p>
      )}
    </>
  );
}

function SavedContacts({ segmentId }: { segmentId: string }) {
  const contacts = usePaged<ContactSummary>(`/segments/${encodeURIComponent(segmentId)}/contacts`);
  if (contacts.error) return <ErrorState error={contacts.error} onRetry={contacts.reload} />;
  if (!contacts.first) return <Loading label="Counting…" />;
  const count = typeof contacts.first.count === 'number' ? contacts.first.count : contacts.items.length;
  return (
    <>
      <Count count={count} />
      <ContactList items={contacts.items} />
      {contacts.hasMore && (
        <button type="button" className="button" onClick={() => void contacts.more()} disabled={contacts.loading}>
          {contacts.loading ? 'Loading…' : 'Load more'}
        </button>
      )}
    </>
  );
}

function Count({ count, note }: { count: number; note?: string }) {
  return (
    <div className="segment-count">
      <p className="segment-count__value" data-testid="segment-count">
        {formatNumber(count)}
      </p>
      <p className="segment-count__label">
        {count === 1 ? 'contact matches' : 'contacts match'}
        {note && <span className="muted small"> · {note}</span>}
      </p>
    </div>
  );
}

function ContactList({ items }: { items: ContactSummary[] }) {
  if (items.length === 0) return <p className="muted">No contact matches these criteria.</p>;
  return (
    <ul className="contact-list">
      {items.map((c) => (
        <li key={c.id}>
          <Link to={`/contacts/${encodeURIComponent(c.id)}`} className="strong-link">
            {c.name}
          </Link>
          <span className="muted small">{c.email ?? c.phone ?? ''}</span>
          {c.optedOut && <Badge tone="amber">Opted out</Badge>}
        </li>
      ))}
    </ul>
  );
}
