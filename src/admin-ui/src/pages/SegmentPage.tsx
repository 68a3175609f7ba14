import { type FormEvent, useEffect, useMemo, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { ApiError, api } from '../api';
import { ConfirmButton } from '../components/Confirm';
import { CheckboxField, FieldSet, FormAlert, SelectField, TextField, useFormErrors } from '../components/Form';
import { PageHeader } from '../components/PageHeader';
import { ErrorState, Loading } from '../components/States';
import { useApi, useDebounced } from '../hooks';
import type { ContactSummary, CustomField, Segment } from '../types';
import { type CriteriaForm, criteriaForm, criteriaOf, emptyCriteria, hasCriteria, MAX_WITHIN_DAYS } from './segment/criteria';
import { type PreviewState, SegmentContacts } from './segment/SegmentContacts';

export function SegmentPage() {
  const { id } = useParams();
  // The contract has no GET /segments/:id: the segment comes from the list.
  const list = useApi<{ items: Segment[] }>(id ? '/segments' : null);
  const found = list.data?.items.find((s) => s.id === id);
  if (!id) return <SegmentScreen segment={undefined} />;
  if (list.error || (list.data && !found)) {
    return (
      <>
        <Link to="/segments" className="back-link">
          ← Segments
        </Link>
        <ErrorState page error={list.error ?? new ApiError(404, 'Segment not found')} onRetry={list.reload} />
      </>
    );
  }
  if (!found) return <Loading />;
  return <SegmentScreen key={found.id} segment={found} />;
}

function SegmentScreen({ segment }: { segment: Segment | undefined }) {
  const navigate = useNavigate();
  const fieldDefs = useApi<{ items: CustomField[] }>('/fields');
  const [name, setName] = useState(segment?.name ?? '');
  const [form, setForm] = useState<CriteriaForm>(segment ? criteriaForm(segment.criteria) : emptyCriteria());
  const [savedState, setSavedState] = useState(() =>
    JSON.stringify({ name: segment?.name ?? '', criteria: segment ? criteriaOf(criteriaForm(segment.criteria)) : null }),
  );
  const [segmentId, setSegmentId] = useState(segment?.id);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const errors = useFormErrors();
  const previewErrors = useFormErrors();

  const criteria = useMemo(() => criteriaOf(form), [form]);
  const criteriaKey = JSON.stringify(criteria);
  const settledKey = useDebounced(criteriaKey, 400);
  const dirty = JSON.stringify({ name: name.trim(), criteria }) !== savedState;
  const criteriaDirty =
    !segmentId || JSON.stringify(criteria) !== JSON.stringify((JSON.parse(savedState) as { criteria: unknown }).criteria);
  const [preview, setPreview] = useState<PreviewState>({ state: 'idle' });

  // Live count of the criteria being built (unsaved), as soon as the typing settles.
  // biome-ignore lint/correctness/useExhaustiveDependencies: previewErrors is a new object each render; its setters are stable
  useEffect(() => {
    const current = JSON.parse(settledKey) as ReturnType<typeof criteriaOf>;
    if (!criteriaDirty) return;
    // An event condition still without a type is not counted yet (saving it says what is missing).
    if (current.event && !current.event.type) delete current.event;
    if (!hasCriteria(current)) {
      setPreview({ state: 'idle' });
      previewErrors.clear();
      return;
    }
    let stale = false;
    setPreview((p) => (p.state === 'done' ? { ...p, refreshing: true } : { state: 'loading' }));
    api
      .post<{ count: number; items: ContactSummary[] }>('/segments/preview', { criteria: current })
      .then((answer) => {
        if (stale) return;
        previewErrors.clear();
        setPreview({ state: 'done', count: answer.count, items: answer.items });
      })
      .catch((err) => {
        if (stale) return;
        previewErrors.set(err);
        setPreview({ state: 'error', error: err });
      });
    return () => {
      stale = true;
    };
    // Runs when the settled criteria change (previewErrors is a new object each render; its setters are stable).
  }, [settledKey, criteriaDirty]);

  const set = <K extends keyof CriteriaForm>(key: K, value: CriteriaForm[K]) => setForm((f) => ({ ...f, [key]: value }));
  // Save errors first, then the live preview's (both name members under /criteria).
  const err = (path: string) => errors.get(path) ?? previewErrors.get(path);

  const save = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    errors.clear();
    try {
      const body = { name: name.trim(), criteria };
      const saved = segmentId
        ? await api.put<Segment>(`/segments/${encodeURIComponent(segmentId)}`, body)
        : await api.post<Segment>('/segments', body);
      setSavedState(JSON.stringify({ name: saved.name, criteria: criteriaOf(criteriaForm(saved.criteria)) }));
      setNotice('Segment saved.');
      if (!segmentId) {
        setSegmentId(saved.id);
        navigate(`/segments/${encodeURIComponent(saved.id)}`, { replace: true });
      }
    } catch (error) {
      errors.set(error);
    } finally {
      setBusy(false);
    }
  };

  const remove = async () => {
    if (!segmentId) return;
    await api.del(`/segments/${encodeURIComponent(segmentId)}`);
    navigate('/segments');
  };

  const fields = fieldDefs.data?.items ?? [];
  return (
    <>
      <Link to="/segments" className="back-link">
        ← Segments
      </Link>
      <PageHeader
        title={segment?.name ?? 'New segment'}
        documentTitle={segment ? `Segment ${segment.name}` : 'New segment'}
        actions={
          segmentId && (
            <>
              {/* The saved criteria's contacts, as the server evaluates them now (a CSV download). */}
              <a className="button" href={`/admin/api/segments/${encodeURIComponent(segmentId)}/export`} download>
                Export CSV
              </a>
              <ConfirmButton label="Delete" confirmLabel="Delete segment" className="button button--danger-quiet" onConfirm={remove} />
            </>
          )
        }
      />
      {notice && !dirty && (
        <p className="alert alert--success" role="status">
          {notice}
        </p>
      )}
      <div className="segment-layout">
        <form onSubmit={save} noValidate className="stack">
          <section className="card">
            <TextField
              label="Segment name"
              value={name}
              onChange={(e) => setName(e.target.value)}
              error={errors.get('/name')}
              maxLength={255}
              required
              placeholder="e.g. Recent pro buyers"
            />
          </section>
          <section className="card" aria-labelledby="criteria-title">
            <h2 id="criteria-title">Contacts who match all of</h2>
            <FieldSet legend="Event" error={err('/criteria/event')}>
              <CheckboxField label="Has an event" checked={form.useEvent} onChange={(e) => set('useEvent', e.target.checked)} />
              {form.useEvent && (
                <div className="grid-2">
                  <TextField
                    label="Event type"
                    hint="Exact text, case included (e.g. purchase)."
                    value={form.eventType}
                    onChange={(e) => set('eventType', e.target.value)}
                    error={err('/criteria/event/type')}
                  />
                  <TextField
                    label="Within the last (days)"
                    type="number"
                    inputMode="numeric"
                    min={1}
                    max={MAX_WITHIN_DAYS}
                    step={1}
                    hint={`1 to ${MAX_WITHIN_DAYS} days.`}
                    value={form.withinDays}
                    onChange={(e) => set('withinDays', e.target.value)}
                    error={err('/criteria/event/withinDays')}
                  />
                  <TextField
                    label="Metadata key (optional)"
                    value={form.metadataKey}
                    onChange={(e) => set('metadataKey', e.target.value)}
                    error={err('/criteria/event/metadata/key') ?? err('/criteria/event/metadata')}
                    placeholder="plan"
                  />
                  <TextField
                    label="Metadata value"
                    hint="Compared as text."
                    value={form.metadataValue}
                    onChange={(e) => set('metadataValue', e.target.value)}
                    error={err('/criteria/event/metadata/value')}
                    disabled={!form.metadataKey.trim()}
                    placeholder="pro"
                  />
                </div>
              )}
            </FieldSet>
            <TextField
              label="Tags"
              hint="Comma-separated; the contact has every one."
              value={form.tags}
              onChange={(e) => set('tags', e.target.value)}
              error={err('/criteria/tags') ?? errors.under('/criteria/tags') ?? previewErrors.under('/criteria/tags')}
              placeholder="newsletter, black-friday"
            />
            <FieldSet legend="Field values" error={err('/criteria/fields')}>
              {form.fields.length === 0 && fields.length > 0 && <p className="muted">No field conditions.</p>}
              {form.fields.map((f, i) => (
                <div key={i} className="row-field row-field--pair">
                  <SelectField
                    label={`Field ${i + 1}`}
                    value={f.name}
                    onChange={(e) =>
                      set(
                        'fields',
                        form.fields.map((x, j) => (j === i ? { ...x, name: e.target.value } : x)),
                      )
                    }
                    error={err(`/criteria/fields/${i}/name`)}
                  >
                    <option value="">Choose a field…</option>
                    {fields.map((d) => (
                      <option key={d.id} value={d.name}>
                        {d.name} ({d.type})
                      </option>
                    ))}
                    {f.name && !fields.some((d) => d.name === f.name) && <option value={f.name}>{f.name}</option>}
                  </SelectField>
                  <TextField
                    label={`Value ${i + 1}`}
                    value={f.value}
                    onChange={(e) =>
                      set(
                        'fields',
                        form.fields.map((x, j) => (j === i ? { ...x, value: e.target.value } : x)),
                      )
                    }
                    error={err(`/criteria/fields/${i}/value`) ?? err(`/criteria/fields/${i}`)}
                  />
                  <button
                    type="button"
                    className="button button--small button--quiet"
                    onClick={() =>
                      set(
                        'fields',
                        form.fields.filter((_, j) => j !== i),
                      )
                    }
                    aria-label={`Remove field condition ${i + 1}`}
                  >
                    Remove
                  </button>
                </div>
              ))}
              {fields.length === 0 && fieldDefs.data ? (
                <p className="muted small">
                  No custom fields yet: <Link to="/fields">define one</Link> to select contacts by its value.
                </p>
              ) : (
                <button
                  type="button"
                  className="button button--small"
                  onClick={() => set('fields', [...form.fields, { name: fields[0]?.name ?? '', value: '' }])}
                >
                  Add field condition
                </button>
              )}
            </FieldSet>
          </section>
          <div className="form-footer">
            <FormAlert errors={errors} shown={['/name', '/criteria/*']} />
            <div className="form-actions">
              <button type="submit" className="button button--primary" disabled={busy || (segmentId !== undefined && !dirty)}>
                {busy ? 'Saving…' : segmentId ? 'Save changes' : 'Save segment'}
              </button>
            </div>
          </div>
        </form>
        <div className="segment-layout__side">
          <SegmentContacts segmentId={criteriaDirty ? undefined : segmentId} preview={preview} />
        </div>
      </div>
    </>
  );
}
