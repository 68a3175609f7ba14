import { type FormEvent, useState } from 'react';
import { api } from '../api';
import { Badge } from '../components/Badge';
import { FormAlert, SelectField, TextField, useFormErrors } from '../components/Form';
import { PageHeader } from '../components/PageHeader';
import { RenameDelete } from '../components/RenameDelete';
import { EmptyState, ErrorState, Loading } from '../components/States';
import { Table } from '../components/Table';
import { useApi } from '../hooks';
import { type CustomField, type CustomFieldInput, FIELD_TYPES, type FieldType, type RenameInput } from '../types';

/** What the API accepts for each type (service-spec.md, custom field value formats). */
export const FIELD_FORMATS: Record<FieldType, string> = {
  string: 'Text',
  number: 'Decimal point, e.g. 49.90',
  date: 'yyyy-mm-dd or dd/mm/yyyy',
  boolean: 'true or false',
  location: 'A city name',
  phone: '+ and country code',
  array: 'A JSON list',
};

export function FieldsPage() {
  const fields = useApi<{ items: CustomField[] }>('/fields');
  const [name, setName] = useState('');
  const [type, setType] = useState<FieldType>('string');
  const [busy, setBusy] = useState(false);
  const [added, setAdded] = useState<string | null>(null);
  const errors = useFormErrors();

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    errors.clear();
    setAdded(null);
    try {
      const field = await api.post<CustomField>('/fields', { name: name.trim(), type } satisfies CustomFieldInput);
      setAdded(field.name);
      setName('');
      await fields.reload();
    } catch (err) {
      errors.set(err, '/name');
    } finally {
      setBusy(false);
    }
  };

  const items = fields.data?.items ?? [];
  const rename = async (field: CustomField, newName: string) => {
    await api.patch<CustomField>(`/fields/${encodeURIComponent(field.id)}`, { name: newName } satisfies RenameInput);
    await fields.reload();
  };
  const remove = async (field: CustomField) => {
    await api.del(`/fields/${encodeURIComponent(field.id)}`);
    await fields.reload();
  };
  return (
    <>
      <PageHeader
        title="Custom fields"
        description="Fields your back end can write on contacts with POST /api/leads (fields: [{key, value}], where key is the field name)."
      />
      <p className="muted">
        Renaming keeps every stored value and updates saved segments; your back end and templates ({'{{ contact.fields.Name }}'}) must use
        the new name. Deleting removes every contact's value; a field a segment uses cannot be deleted.
      </p>
      <section className="card" aria-labelledby="new-field-title">
        <h2 id="new-field-title">New field</h2>
        <form onSubmit={submit} noValidate className="inline-form">
          <TextField
            label="Name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            error={errors.get('/name')}
            required
            maxLength={255}
            placeholder="e.g. city"
          />
          <SelectField
            label="Type"
            value={type}
            onChange={(e) => setType(e.target.value as FieldType)}
            error={errors.get('/type')}
            hint={FIELD_FORMATS[type]}
          >
            {FIELD_TYPES.map((t) => (
              <option key={t} value={t}>
                {t[0]!.toUpperCase() + t.slice(1)}
              </option>
            ))}
          </SelectField>
          <div className="inline-form__submit">
            <button type="submit" className="button button--primary" disabled={busy}>
              {busy ? 'Adding…' : 'Add field'}
            </button>
          </div>
          <FormAlert errors={errors} shown={['/name', '/type']} />
        </form>
        {added && (
          <p className="alert alert--success" role="status">
            Field “{added}” added.
          </p>
        )}
      </section>

      {fields.error ? (
        <ErrorState error={fields.error} onRetry={fields.reload} />
      ) : !fields.data ? (
        <Loading />
      ) : items.length === 0 ? (
        <EmptyState title="No custom fields yet">
          <p>Define a field (a name and a type) before your back end writes it: values for undefined fields are not stored.</p>
        </EmptyState>
      ) : (
        <Table
          caption="Custom fields"
          rows={items}
          rowKey={(f) => f.id}
          columns={[
            { header: 'Name', cell: (f) => <code>{f.name}</code> },
            { header: 'Type', cell: (f) => <Badge tone="blue">{f.type}</Badge> },
            { header: 'Format', cell: (f) => <span className="muted">{FIELD_FORMATS[f.type] ?? ''}</span> },
            {
              header: 'Actions',
              cell: (f) => (
                <RenameDelete name={f.name} what={`field ${f.name}`} onRename={(n) => rename(f, n)} onDelete={() => remove(f)} />
              ),
            },
          ]}
        />
      )}
    </>
  );
}
