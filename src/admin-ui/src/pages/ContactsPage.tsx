import { type FormEvent, useEffect, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { query } from '../api';
import { Badge, Tags } from '../components/Badge';
import { PageHeader } from '../components/PageHeader';
import { EmptyState, ErrorState, Loading } from '../components/States';
import { Table } from '../components/Table';
import { formatDate } from '../format';
import { useApi, usePaged } from '../hooks';
import type { ContactSummary } from '../types';

/** Search and filters live in the address, so a search can be shared and Back returns to it. */
export function ContactsPage() {
  const [params, setParams] = useSearchParams();
  const q = params.get('q') ?? '';
  const tag = params.get('tag') ?? '';
  const archived = params.get('archived') === 'true';
  const optedOut = params.get('optedOut') ?? '';
  const [draft, setDraft] = useState({ q, tag });
  useEffect(() => setDraft({ q, tag }), [q, tag]);

  const filters = query({ q, tag, archived: archived ? 'true' : undefined, optedOut });
  const contacts = usePaged<ContactSummary>(`/contacts${filters}`);
  // All pages together: the list shows 50 at a time.
  const total = useApi<{ count: number }>(`/contacts/count${filters}`);
  const filtered = Boolean(q || tag || archived || optedOut);

  const update = (changes: Record<string, string>) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(changes)) {
      if (v) next.set(k, v);
      else next.delete(k);
    }
    setParams(next);
  };

  const search = (e: FormEvent) => {
    e.preventDefault();
    update({ q: draft.q.trim(), tag: draft.tag.trim() });
  };

  return (
    <>
      <PageHeader
        title="Contacts"
        description="Everyone your back end has written through the API or imported. Find a contact by part of an email or name, a phone or a tag."
        actions={
          <>
            <Link to="/contacts/import" className="button">
              Import CSV
            </Link>
            {/* The list as filtered now, every page (a CSV download). */}
            <a className="button" href={`/admin/api/contacts/export${filters}`} download>
              Export CSV
            </a>
          </>
        }
      />
      <form className="card filters" role="search" aria-label="Contacts" onSubmit={search}>
        <div className="field filters__q">
          <label htmlFor="contacts-q">Email, phone or name</label>
          <input
            id="contacts-q"
            type="search"
            value={draft.q}
            onChange={(e) => setDraft({ ...draft, q: e.target.value })}
            placeholder="ada@, example.com, +33612345678, Love"
          />
        </div>
        <div className="field">
          <label htmlFor="contacts-tag">Tag</label>
          <input
            id="contacts-tag"
            type="search"
            value={draft.tag}
            onChange={(e) => setDraft({ ...draft, tag: e.target.value })}
            placeholder="black-friday"
          />
        </div>
        <div className="field">
          <label htmlFor="contacts-archived">List</label>
          <select id="contacts-archived" value={archived ? 'true' : ''} onChange={(e) => update({ archived: e.target.value })}>
            <option value="">Listed contacts</option>
            <option value="true">Archived contacts</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor="contacts-optout">Opt-out</label>
          <select id="contacts-optout" value={optedOut} onChange={(e) => update({ optedOut: e.target.value })}>
            <option value="">Any</option>
            <option value="false">Subscribed</option>
            <option value="true">Opted out</option>
          </select>
        </div>
        <div className="filters__actions">
          <button type="submit" className="button button--primary">
            Search
          </button>
          {filtered && (
            <button type="button" className="button button--quiet" onClick={() => setParams(new URLSearchParams())}>
              Clear
            </button>
          )}
        </div>
      </form>

      {contacts.error ? (
        <ErrorState error={contacts.error} onRetry={contacts.reload} />
      ) : contacts.loading && contacts.items.length === 0 ? (
        <Loading />
      ) : contacts.items.length === 0 ? (
        filtered ? (
          <EmptyState title="No matching contacts">
            <p>
              Text matches any part of a name or an email, ignoring case; a phone must match exactly. Archived contacts only show under
              “Archived contacts”.
            </p>
          </EmptyState>
        ) : (
          <EmptyState title="No contacts yet">
            <p>
              Contacts arrive through the API: <code>POST /api/leads</code> with an email or phone and a name.
            </p>
          </EmptyState>
        )
      ) : (
        <>
          <Table
            caption="Contacts"
            rows={contacts.items}
            rowKey={(c) => c.id}
            columns={[
              {
                header: 'Name',
                cell: (c) => (
                  <Link to={`/contacts/${encodeURIComponent(c.id)}`} className="strong-link">
                    {c.name}
                  </Link>
                ),
              },
              { header: 'Email', cell: (c) => c.email ?? <span className="muted">—</span> },
              { header: 'Phone', className: 'nowrap', cell: (c) => c.phone ?? <span className="muted">—</span> },
              { header: 'Tags', cell: (c) => <Tags tags={c.tags} /> },
              {
                header: 'Status',
                cell: (c) => (
                  <span className="badges">
                    {c.archived && <Badge tone="gray">Archived</Badge>}
                    {c.optedOut ? <Badge tone="amber">Opted out</Badge> : !c.archived && <Badge tone="green">Subscribed</Badge>}
                  </span>
                ),
              },
              { header: 'Created', className: 'nowrap', cell: (c) => formatDate(c.createdAt) },
            ]}
          />
          <div className="pager">
            <p className="muted" role="status">
              Showing {contacts.items.length} of{' '}
              {total.data ? <strong className="contacts-total">{total.data.count.toLocaleString('en')}</strong> : <span>…</span>}{' '}
              {total.data?.count === 1 ? 'contact' : 'contacts'}
            </p>
            {contacts.hasMore && (
              <button type="button" className="button" onClick={() => void contacts.more()} disabled={contacts.loading}>
                {contacts.loading ? 'Loading…' : 'Load more'}
              </button>
            )}
          </div>
        </>
      )}
    </>
  );
}
