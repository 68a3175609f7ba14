import { type FormEvent, useEffect, useMemo, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { ApiError, api } from '../api';
import { ConfirmButton } from '../components/Confirm';
import { FormAlert, TextField, useFormErrors } from '../components/Form';
import { PageHeader } from '../components/PageHeader';
import { ErrorState, Loading } from '../components/States';
import { useApi, useDebounced } from '../hooks';
import type { ContactSummary, CustomField, Kpi, Segment } from '../types';
import { CriteriaEditor } from './segment/CriteriaEditor';
import { type CriteriaForm, criteriaForm, criteriaOf, emptyCriteria, previewable } from './segment/criteria';
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
  const kpiDefs = useApi<{ items: Kpi[] }>('/kpis');
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
    if (!criteriaDirty) return;
    const current = previewable(JSON.parse(settledKey) as ReturnType<typeof criteriaOf>);
    if (!current) {
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

  // Save errors first, then the live preview's (both name members under /criteria).
  const err = (path: string, under = false) =>
    under ? (errors.under(path) ?? previewErrors.under(path)) : (errors.get(path) ?? previewErrors.get(path));

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
          <CriteriaEditor
            form={form}
            onChange={setForm}
            err={err}
            fields={fieldDefs.data?.items ?? []}
            kpis={kpiDefs.data?.items ?? []}
            loaded={Boolean(fieldDefs.data && kpiDefs.data)}
          />
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
