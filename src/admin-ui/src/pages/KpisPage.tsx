import { type FormEvent, useState } from 'react';
import { api } from '../api';
import { FormAlert, TextField, useFormErrors } from '../components/Form';
import { PageHeader } from '../components/PageHeader';
import { RenameDelete } from '../components/RenameDelete';
import { EmptyState, ErrorState, Loading } from '../components/States';
import { Table } from '../components/Table';
import { useApi } from '../hooks';
import type { Kpi, KpiInput, RenameInput } from '../types';

export function KpisPage() {
  const kpis = useApi<{ items: Kpi[] }>('/kpis');
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [added, setAdded] = useState<string | null>(null);
  const errors = useFormErrors();

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    errors.clear();
    setAdded(null);
    try {
      const kpi = await api.post<Kpi>('/kpis', { id: id.trim(), name: name.trim() } satisfies KpiInput);
      setAdded(kpi.name);
      setId('');
      setName('');
      await kpis.reload();
    } catch (err) {
      errors.set(err, '/id');
    } finally {
      setBusy(false);
    }
  };

  const items = kpis.data?.items ?? [];
  const rename = async (kpi: Kpi, newName: string) => {
    await api.patch<Kpi>(`/kpis/${encodeURIComponent(kpi.id)}`, { name: newName } satisfies RenameInput);
    await kpis.reload();
  };
  const remove = async (kpi: Kpi) => {
    await api.del(`/kpis/${encodeURIComponent(kpi.id)}`);
    await kpis.reload();
  };
  return (
    <>
      <PageHeader
        title="KPIs"
        description="Running totals per contact. Each number your back end sends (kpis: {id: number}) is added to the contact's current value."
      />
      <p className="muted">Renaming changes the display name only (the id stays). Deleting removes every contact's total.</p>
      <section className="card" aria-labelledby="new-kpi-title">
        <h2 id="new-kpi-title">New KPI</h2>
        <form onSubmit={submit} noValidate className="inline-form">
          <TextField
            label="KPI id"
            hint="The key used in the API."
            value={id}
            onChange={(e) => setId(e.target.value)}
            error={errors.get('/id')}
            required
            maxLength={255}
            placeholder="e.g. ltv"
          />
          <TextField
            label="Display name"
            hint="Shown in the panel."
            value={name}
            onChange={(e) => setName(e.target.value)}
            error={errors.get('/name')}
            required
            maxLength={255}
            placeholder="e.g. Lifetime value"
          />
          <div className="inline-form__submit">
            <button type="submit" className="button button--primary" disabled={busy}>
              {busy ? 'Adding…' : 'Add KPI'}
            </button>
          </div>
          <FormAlert errors={errors} shown={['/id', '/name']} />
        </form>
        {added && (
          <p className="alert alert--success" role="status">
            KPI “{added}” added.
          </p>
        )}
      </section>

      {kpis.error ? (
        <ErrorState error={kpis.error} onRetry={kpis.reload} />
      ) : !kpis.data ? (
        <Loading />
      ) : items.length === 0 ? (
        <EmptyState title="No KPIs yet">
          <p>Define a KPI (an id and a display name) before your back end writes it.</p>
        </EmptyState>
      ) : (
        <Table
          caption="KPIs"
          rows={items}
          rowKey={(k) => k.id}
          columns={[
            { header: 'KPI id', cell: (k) => <code>{k.id}</code> },
            { header: 'Display name', cell: (k) => k.name },
            {
              header: 'Actions',
              cell: (k) => <RenameDelete name={k.name} what={`KPI ${k.id}`} onRename={(n) => rename(k, n)} onDelete={() => remove(k)} />,
            },
          ]}
        />
      )}
    </>
  );
}
