import { type FormEvent, type ReactNode, useMemo, useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, errorMessage, query } from '../api';
import { ActivityFeed } from '../components/ActivityFeed';
import { Badge, Tags } from '../components/Badge';
import { FormAlert, TextAreaField, useFormErrors } from '../components/Form';
import { PageHeader } from '../components/PageHeader';
import { EmptyState, ErrorState, Loading } from '../components/States';
import { formatDateTime, formatNumber, formatValue } from '../format';
import { useApi } from '../hooks';
import { useIsAdmin } from '../session';
import type { ActivityItem, AdminContactProfile, Campaign, CustomField, Kpi } from '../types';
import { ContactEditForm } from './contact/ContactEditForm';
import { EraseContact } from './contact/EraseContact';

const FEED_PAGE = 50;

export function ContactPage() {
  const { id = '' } = useParams();
  const path = `/contacts/${encodeURIComponent(id)}`;
  const profile = useApi<AdminContactProfile>(path);
  const kpis = useApi<{ items: Kpi[] }>('/kpis');
  const fields = useApi<{ items: CustomField[] }>('/fields');
  const isAdmin = useIsAdmin();
  const [editing, setEditing] = useState(false);
  const campaigns = useApi<{ items: Campaign[] }>('/campaigns');
  const [olderPages, setOlderPages] = useState<ActivityItem[]>([]);
  const [olderDone, setOlderDone] = useState(false);
  const activity = useApi<{ items: ActivityItem[] }>(`${path}/activity${query({ limit: FEED_PAGE })}`);
  const [flagError, setFlagError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const kpiNames = useMemo(() => new Map((kpis.data?.items ?? []).map((k) => [k.id, k.name])), [kpis.data]);
  const campaignNames = useMemo(() => new Map((campaigns.data?.items ?? []).map((c) => [c.id, c.name])), [campaigns.data]);

  if (profile.error) {
    return (
      <>
        <Link to="/contacts" className="back-link">
          ← Contacts
        </Link>
        <ErrorState page error={profile.error} onRetry={profile.reload} />
      </>
    );
  }
  if (!profile.data) return <Loading />;
  const c = profile.data;

  const setFlags = async (flags: { archived?: boolean; optedOut?: boolean }) => {
    setBusy(true);
    setFlagError(null);
    try {
      profile.setData(await api.patch<AdminContactProfile>(path, flags));
    } catch (err) {
      setFlagError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  const liftSuppression = async (address: string) => {
    setBusy(true);
    setFlagError(null);
    try {
      profile.setData(await api.post<AdminContactProfile>(`${path}/suppressions/lift`, { address }));
    } catch (err) {
      setFlagError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  const refreshFeed = async () => {
    setOlderPages([]);
    setOlderDone(false);
    await Promise.all([activity.reload(), profile.reload()]);
  };

  const feed = [...(activity.data?.items ?? []), ...olderPages];
  const loadOlder = async () => {
    const last = feed[feed.length - 1];
    if (!last) return;
    const page = await api.get<{ items: ActivityItem[] }>(`${path}/activity${query({ limit: FEED_PAGE, before: last.at })}`);
    setOlderPages((p) => [...p, ...page.items]);
    if (page.items.length < FEED_PAGE) setOlderDone(true);
  };
  const canLoadOlder = !olderDone && (olderPages.length > 0 || (activity.data?.items.length ?? 0) >= FEED_PAGE);

  return (
    <>
      <Link to="/contacts" className="back-link">
        ← Contacts
      </Link>
      <PageHeader
        title={c.name}
        meta={
          <>
            {c.archived ? <Badge tone="gray">Archived</Badge> : <Badge tone="green">Listed</Badge>}
            {c.optedOut && <Badge tone="amber">Opted out</Badge>}
            <span className="muted">
              <code className="id">{c.id}</code> · created {formatDateTime(c.createdAt)} · updated {formatDateTime(c.updatedAt)}
            </span>
          </>
        }
        actions={
          <>
            <button type="button" className="button" disabled={busy} onClick={() => void setFlags({ archived: !c.archived })}>
              {c.archived ? 'Return to list' : 'Archive'}
            </button>
            <button
              type="button"
              className={`button${c.optedOut ? '' : ' button--danger-quiet'}`}
              disabled={busy}
              onClick={() => void setFlags({ optedOut: !c.optedOut })}
            >
              {c.optedOut ? 'Opt back in' : 'Opt out'}
            </button>
          </>
        }
      />
      {flagError && (
        <p className="alert alert--error" role="alert">
          {flagError}
        </p>
      )}
      {c.optedOut && (
        <p className="alert alert--warning">This contact opted out: no campaign sends to it, even when triggered through the API.</p>
      )}
      {c.suppressed.length > 0 && (
        <section className="alert alert--warning" aria-labelledby="bounced-title" data-testid="suppressed">
          <p id="bounced-title">
            <strong>Bounced addresses.</strong> Sends to these addresses end in error without being tried, because the recipient's server
            refused them:
          </p>
          <ul className="suppressed-list">
            {c.suppressed.map((s) => (
              <li key={`${s.channel}:${s.address}`}>
                <code>{s.address}</code>{' '}
                <span className="muted">
                  ({s.reason}, {formatDateTime(s.createdAt)})
                </span>{' '}
                <button type="button" className="button button--small" disabled={busy} onClick={() => void liftSuppression(s.address)}>
                  Send to it again
                </button>
              </li>
            ))}
          </ul>
        </section>
      )}

      <div className="profile-layout">
        <div className="stack">
          {editing && fields.data && kpis.data && (
            <ContactEditForm
              path={path}
              contact={c}
              fields={fields.data.items}
              kpis={kpis.data.items}
              onSaved={(saved) => {
                profile.setData(saved);
                setEditing(false);
              }}
              onCancel={() => setEditing(false)}
            />
          )}
          <section className="card" aria-labelledby="identity-title">
            <div className="card__head">
              <h2 id="identity-title">Contact</h2>
              {!editing && (
                <button type="button" className="button button--small" onClick={() => setEditing(true)}>
                  Edit
                </button>
              )}
            </div>
            <dl className="props">
              <Prop label="Emails">{list(c.emails)}</Prop>
              <Prop label="Phones">{list(c.phones)}</Prop>
              <Prop label="Tags">
                <Tags tags={c.tags} />
              </Prop>
              {c.trackers.length > 0 && <Prop label="Visitor ids">{list(c.trackers)}</Prop>}
            </dl>
          </section>
          <section className="card" aria-labelledby="fields-title">
            <h2 id="fields-title">Fields</h2>
            {Object.keys(c.fields).length === 0 ? (
              <p className="muted">No field values.</p>
            ) : (
              <dl className="props">
                {Object.entries(c.fields).map(([name, value]) => (
                  <Prop key={name} label={name}>
                    {formatValue(value)}
                  </Prop>
                ))}
              </dl>
            )}
          </section>
          <section className="card" aria-labelledby="kpis-title">
            <h2 id="kpis-title">KPIs</h2>
            {Object.keys(c.kpis).length === 0 ? (
              <p className="muted">No KPI values.</p>
            ) : (
              <dl className="props">
                {Object.entries(c.kpis).map(([kpiId, value]) => (
                  <Prop key={kpiId} label={kpiNames.get(kpiId) ?? kpiId}>
                    <span className="num-value">{formatNumber(value)}</span>
                  </Prop>
                ))}
              </dl>
            )}
          </section>
          <section className="card" aria-labelledby="metadata-title">
            <h2 id="metadata-title">Metadata</h2>
            {Object.keys(c.metadata).length === 0 ? (
              <p className="muted">No metadata.</p>
            ) : (
              <dl className="props">
                {Object.entries(c.metadata).map(([k, v]) => (
                  <Prop key={k} label={k}>
                    {formatValue(v)}
                  </Prop>
                ))}
              </dl>
            )}
          </section>
          <section className="card" aria-labelledby="notes-title">
            <h2 id="notes-title">Notes</h2>
            {c.notes.length === 0 ? (
              <p className="muted">No notes yet.</p>
            ) : (
              <ul className="notes">
                {[...c.notes].reverse().map((n, i) => (
                  <li key={`${n.createdAt}-${i}`}>
                    <p className="notes__text">{n.text}</p>
                    <p className="muted small">
                      {n.createdBy} · {formatDateTime(n.createdAt)}
                    </p>
                  </li>
                ))}
              </ul>
            )}
          </section>
        </div>

        <div className="stack">
          <NoteForm path={path} onAdded={refreshFeed} />
          <section className="card" aria-labelledby="activity-title">
            <div className="card__head">
              <h2 id="activity-title">Activity</h2>
              <button type="button" className="button button--small" onClick={() => void refreshFeed()}>
                Refresh
              </button>
            </div>
            {activity.error ? (
              <ErrorState error={activity.error} onRetry={activity.reload} />
            ) : !activity.data ? (
              <Loading />
            ) : feed.length === 0 ? (
              <EmptyState title="No activity yet">
                <p>Events, sends and notes of this contact show here, newest first.</p>
              </EmptyState>
            ) : (
              <>
                <ActivityFeed items={feed} campaignNames={campaignNames} />
                {canLoadOlder && (
                  <button type="button" className="button" onClick={() => void loadOlder()}>
                    Load older activity
                  </button>
                )}
              </>
            )}
          </section>
          {isAdmin && <EraseContact path={path} contact={c} />}
        </div>
      </div>
    </>
  );
}

function Prop({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="props__row">
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

function list(values: string[]) {
  if (values.length === 0) return <span className="muted">—</span>;
  return (
    <ul className="plain-list">
      {values.map((v) => (
        <li key={v}>{v}</li>
      ))}
    </ul>
  );
}

function NoteForm({ path, onAdded }: { path: string; onAdded: () => Promise<void> }) {
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const errors = useFormErrors();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    errors.clear();
    try {
      await api.post(`${path}/notes`, { text });
      setText('');
      await onAdded();
    } catch (err) {
      errors.set(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="card" aria-labelledby="note-title">
      <h2 id="note-title">Add a note</h2>
      <form onSubmit={submit} noValidate>
        <TextAreaField
          label="Note"
          className="field--label-hidden"
          rows={3}
          value={text}
          onChange={(e) => setText(e.target.value)}
          error={errors.get('/text')}
          maxLength={10000}
          placeholder="Called about the renewal; call back in March."
        />
        <FormAlert errors={errors} shown={['/text']} />
        <div className="form-actions">
          <button type="submit" className="button button--primary" disabled={busy || text.trim() === ''}>
            {busy ? 'Adding…' : 'Add note'}
          </button>
        </div>
      </form>
    </section>
  );
}
