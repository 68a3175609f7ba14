import { type FormEvent, useState } from 'react';
import { api, errorMessage } from '../api';
import { Badge, type Tone } from '../components/Badge';
import { ConfirmButton } from '../components/Confirm';
import { CopyButton } from '../components/CopyButton';
import { CheckboxField, FieldSet, FormAlert, TextField, useFormErrors } from '../components/Form';
import { PageHeader } from '../components/PageHeader';
import { EmptyState, ErrorState, Loading } from '../components/States';
import { Table } from '../components/Table';
import { endOfDayUtc, formatDate, formatDateTime, oneMonthFromToday } from '../format';
import { useApi } from '../hooks';
import { type ApiKey, type KeyCreatedBody, type KeyInput, type KeyPatchInput, SCOPES, type Scope } from '../types';

type Editing = { mode: 'create' } | { mode: 'edit'; key: ApiKey } | null;

const STATE_TONE: Record<ApiKey['state'], Tone> = { active: 'green', inactive: 'gray', expired: 'red' };
const STATE_LABEL: Record<ApiKey['state'], string> = { active: 'Active', inactive: 'Inactive', expired: 'Expired' };

export function KeysPage() {
  const keys = useApi<{ items: ApiKey[] }>('/keys');
  const [editing, setEditing] = useState<Editing>(null);
  const [created, setCreated] = useState<{ id: string; name: string; key: string } | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);

  const revealValue = (id: string) => api.get<{ key: string }>(`/keys/${encodeURIComponent(id)}/value`).then((r) => r.key);

  const setActive = async (key: ApiKey, active: boolean) => {
    setActionError(null);
    try {
      await api.patch(`/keys/${encodeURIComponent(key.id)}`, { active } satisfies KeyPatchInput);
      await keys.reload();
    } catch (err) {
      setActionError(`${key.name}: ${errorMessage(err)}`);
    }
  };

  const remove = async (key: ApiKey) => {
    setActionError(null);
    try {
      await api.del(`/keys/${encodeURIComponent(key.id)}`);
      if (created?.id === key.id) setCreated(null);
      await keys.reload();
    } catch (err) {
      setActionError(`${key.name}: ${errorMessage(err)}`);
    }
  };

  const items = keys.data?.items ?? [];
  return (
    <>
      <PageHeader
        title="API keys"
        description="Your back end sends one of these keys with every API call (header x-service-api-key). Keep keys on your servers: never put one in a browser or an app."
        actions={
          editing?.mode !== 'create' && (
            <button
              type="button"
              className="button button--primary"
              onClick={() => {
                setCreated(null);
                setEditing({ mode: 'create' });
              }}
            >
              New API key
            </button>
          )
        }
      />

      {created && (
        <section className="card card--success" aria-labelledby="created-key-title">
          <h2 id="created-key-title">Key “{created.name}” created</h2>
          <p>Copy the value into your back end's configuration. You can copy it again later from the list below.</p>
          <div className="secret">
            <label htmlFor="created-key-value" className="visually-hidden">
              Key value
            </label>
            <input
              id="created-key-value"
              type="text"
              className="secret__value"
              readOnly
              value={created.key}
              onFocus={(e) => e.currentTarget.select()}
            />
            <CopyButton text={created.key} label="Copy key" className="button" />
          </div>
          <button type="button" className="button button--quiet" onClick={() => setCreated(null)}>
            Done
          </button>
        </section>
      )}

      {editing && (
        <KeyForm
          key={editing.mode === 'edit' ? editing.key.id : 'new'}
          editing={editing}
          onCancel={() => setEditing(null)}
          onSaved={async (result) => {
            setEditing(null);
            if (result) setCreated(result);
            await keys.reload();
          }}
        />
      )}

      {actionError && (
        <p className="alert alert--error" role="alert">
          {actionError}
        </p>
      )}

      {keys.error ? (
        <ErrorState error={keys.error} onRetry={keys.reload} />
      ) : !keys.data ? (
        <Loading />
      ) : items.length === 0 ? (
        <EmptyState
          title="No API keys yet"
          action={
            !editing && (
              <button type="button" className="button button--primary" onClick={() => setEditing({ mode: 'create' })}>
                Create your first key
              </button>
            )
          }
        >
          <p>Create a key to let your back end write contacts and events and trigger campaigns.</p>
        </EmptyState>
      ) : (
        <Table
          caption="API keys"
          rows={items}
          rowKey={(k) => k.id}
          columns={[
            { header: 'Name', className: 'cell-name', cell: (k) => <strong>{k.name}</strong> },
            {
              header: 'Scopes',
              cell: (k) => (
                <ul className="chips" aria-label="Scopes">
                  {k.scopes.map((s) => (
                    <li key={s} className="chip chip--code">
                      {s}
                    </li>
                  ))}
                </ul>
              ),
            },
            {
              header: 'Status',
              cell: (k) => (
                <Badge tone={STATE_TONE[k.state]} dot>
                  {STATE_LABEL[k.state]}
                </Badge>
              ),
            },
            {
              header: 'Expires',
              className: 'nowrap',
              cell: (k) => (k.expiresAt ? formatDateTime(k.expiresAt) : <span className="muted">Never</span>),
            },
            { header: 'Created', className: 'nowrap', cell: (k) => formatDate(k.createdAt) },
            {
              header: 'Actions',
              className: 'actions',
              cell: (k) => (
                <div className="row-actions" role="group" aria-label={`Actions for ${k.name}`}>
                  <CopyButton load={() => revealValue(k.id)} label="Copy value" />
                  <button type="button" className="button button--small" onClick={() => void setActive(k, !k.active)}>
                    {k.active ? 'Switch off' : 'Switch on'}
                  </button>
                  <button
                    type="button"
                    className="button button--small"
                    onClick={() => {
                      setCreated(null);
                      setEditing({ mode: 'edit', key: k });
                    }}
                  >
                    Edit
                  </button>
                  <ConfirmButton label="Delete" confirmLabel="Delete key" onConfirm={() => remove(k)} />
                </div>
              ),
            },
          ]}
        />
      )}
    </>
  );
}

function KeyForm({
  editing,
  onCancel,
  onSaved,
}: {
  editing: NonNullable<Editing>;
  onCancel: () => void;
  onSaved: (created?: { id: string; name: string; key: string }) => Promise<void>;
}) {
  const existing = editing.mode === 'edit' ? editing.key : undefined;
  const [name, setName] = useState(existing?.name ?? '');
  const [scopes, setScopes] = useState<Scope[]>(existing?.scopes ?? ['leads:write', 'events:write', 'campaigns:trigger']);
  const [active, setActive] = useState(existing?.active ?? true);
  const [expires, setExpires] = useState(Boolean(existing?.expiresAt));
  // An existing expiry shows as its UTC day; a new one proposes one month from today.
  const [expiryDay, setExpiryDay] = useState(existing?.expiresAt ? existing.expiresAt.slice(0, 10) : oneMonthFromToday());
  const [busy, setBusy] = useState(false);
  const errors = useFormErrors();

  const toggleScope = (scope: Scope, on: boolean) =>
    setScopes((current) => (on ? [...current, scope] : current.filter((s) => s !== scope)));

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    errors.clear();
    const ordered = SCOPES.map((s) => s.id).filter((s) => scopes.includes(s));
    const body: KeyInput = {
      name: name.trim(),
      scopes: ordered,
      active,
      expiresAt: expires ? (expiryDay ? endOfDayUtc(expiryDay) : '') : null,
    };
    try {
      if (existing) {
        await api.patch(`/keys/${encodeURIComponent(existing.id)}`, body);
        await onSaved();
      } else {
        const result = await api.post<KeyCreatedBody>('/keys', body);
        await onSaved({ id: result.id, name: result.name ?? body.name, key: result.key });
      }
    } catch (err) {
      errors.set(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card" aria-labelledby="key-form-title">
      <h2 id="key-form-title">{existing ? `Edit “${existing.name}”` : 'New API key'}</h2>
      <form onSubmit={submit} noValidate>
        <TextField
          label="Name"
          hint="Who uses the key, e.g. “Shop back end”."
          value={name}
          onChange={(e) => setName(e.target.value)}
          error={errors.get('/name')}
          required
          autoFocus
          maxLength={255}
        />
        <FieldSet legend="Scopes" hint="What the key may do." error={errors.under('/scopes')} className="scopes">
          {SCOPES.map((s) => (
            <CheckboxField
              key={s.id}
              label={
                <>
                  <code>{s.id}</code> <span className="muted">{s.hint}</span>
                </>
              }
              checked={scopes.includes(s.id)}
              onChange={(e) => toggleScope(s.id, e.target.checked)}
            />
          ))}
        </FieldSet>
        <CheckboxField
          label="Active"
          hint="An inactive key is refused with 403."
          checked={active}
          onChange={(e) => setActive(e.target.checked)}
          error={errors.get('/active')}
        />
        <CheckboxField label="Expires automatically" checked={expires} onChange={(e) => setExpires(e.target.checked)} />
        {expires && (
          <TextField
            label="Expiration date"
            type="date"
            hint="The key stops working at the end of this day (UTC)."
            value={expiryDay}
            onChange={(e) => setExpiryDay(e.target.value)}
            error={errors.get('/expiresAt')}
            className="field--narrow"
          />
        )}
        <FormAlert errors={errors} shown={['/name', '/scopes', '/scopes/*', '/active', ...(expires ? ['/expiresAt'] : [])]} />
        <div className="form-actions">
          <button type="submit" className="button button--primary" disabled={busy}>
            {busy ? 'Saving…' : existing ? 'Save changes' : 'Create key'}
          </button>
          <button type="button" className="button button--quiet" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}
