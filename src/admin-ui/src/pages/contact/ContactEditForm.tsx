import { type FormEvent, useState } from 'react';
import { api } from '../../api';
import { CheckboxField, FieldSet, FormAlert, TextField, useFormErrors } from '../../components/Form';
import { formatValue } from '../../format';
import type { AdminContactProfile, ContactEditBody, CustomField, Kpi } from '../../types';

/**
 * Edits the name, tags, custom field values and KPI totals of a contact through
 * `POST /contacts/:id/edit`, which applies the rules of `POST /api/leads`: a field value is
 * written as the API takes it (text; an array field as a JSON list; empty clears it), a KPI
 * gets an amount added to its total. Only what was changed is sent; each refusal shows on its field.
 */
export function ContactEditForm({
  path,
  contact,
  fields,
  kpis,
  onSaved,
  onCancel,
}: {
  path: string;
  contact: AdminContactProfile;
  fields: CustomField[];
  kpis: Kpi[];
  onSaved: (profile: AdminContactProfile) => void;
  onCancel: () => void;
}) {
  const [name, setName] = useState(contact.name);
  const [newTags, setNewTags] = useState('');
  const [removed, setRemoved] = useState<string[]>([]);
  const initialValue = (f: CustomField) => (f.name in contact.fields ? formatValue(contact.fields[f.name]) : '');
  const [values, setValues] = useState<Record<string, string>>(() => Object.fromEntries(fields.map((f) => [f.name, initialValue(f)])));
  const [increments, setIncrements] = useState<Record<string, string>>({});
  // The field name behind each index of the `fields` sent, to put `/fields/<i>` errors on their input.
  const [sentFields, setSentFields] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const errors = useFormErrors();

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const changed = fields.filter((f) => (values[f.name] ?? '') !== initialValue(f));
    const body: ContactEditBody = {};
    if (name !== contact.name) body.name = name;
    const tags = newTags
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t !== '');
    if (tags.length > 0) body.tags = tags;
    if (removed.length > 0) body.tagsRemove = removed;
    if (changed.length > 0) body.fields = changed.map((f) => ({ key: f.name, value: fieldValue(f, values[f.name] ?? '') }));
    const kpiEntries = Object.entries(increments).filter(([, v]) => v.trim() !== '');
    if (kpiEntries.length > 0) body.kpis = Object.fromEntries(kpiEntries.map(([id, v]) => [id, v.trim()]));
    setSentFields(changed.map((f) => f.name));
    setBusy(true);
    errors.clear();
    try {
      onSaved(await api.post<AdminContactProfile>(`${path}/edit`, body));
    } catch (err) {
      errors.set(err);
    } finally {
      setBusy(false);
    }
  };

  const fieldError = (fieldName: string) => {
    const i = sentFields.indexOf(fieldName);
    return i === -1 ? undefined : errors.get(`/fields/${i}`);
  };

  return (
    <section className="card" aria-labelledby="edit-title">
      <h2 id="edit-title">Edit contact</h2>
      <form onSubmit={submit} noValidate>
        <TextField label="Name" value={name} onChange={(e) => setName(e.target.value)} error={errors.get('/name')} required />
        <TextField
          label="Add tags"
          value={newTags}
          onChange={(e) => setNewTags(e.target.value)}
          error={errors.under('/tags')}
          hint="Separated by commas."
        />
        {contact.tags.length > 0 && (
          <FieldSet legend="Remove tags" error={errors.under('/tagsRemove')}>
            {contact.tags.map((tag) => (
              <CheckboxField
                key={tag}
                label={tag}
                checked={removed.includes(tag)}
                onChange={(e) => setRemoved((r) => (e.target.checked ? [...r, tag] : r.filter((t) => t !== tag)))}
              />
            ))}
          </FieldSet>
        )}
        {fields.map((f) => (
          <TextField
            key={f.id}
            label={f.name}
            value={values[f.name] ?? ''}
            onChange={(e) => setValues((v) => ({ ...v, [f.name]: e.target.value }))}
            error={fieldError(f.name)}
            hint={FIELD_HINTS[f.type]}
          />
        ))}
        {kpis.map((k) => (
          <TextField
            key={k.id}
            label={`Add to ${k.name}`}
            inputMode="decimal"
            value={increments[k.id] ?? ''}
            onChange={(e) => setIncrements((v) => ({ ...v, [k.id]: e.target.value }))}
            error={errors.get(`/kpis/${k.id.replaceAll('~', '~0').replaceAll('/', '~1')}`)}
            hint={`Total now ${contact.kpis[k.id] ?? 0}; a negative amount subtracts.`}
          />
        ))}
        <FormAlert errors={errors} shown={['/name', '/tags/*', '/tagsRemove/*', '/fields/*', '/kpis/*']} />
        <div className="form-actions">
          <button type="submit" className="button button--primary" disabled={busy}>
            {busy ? 'Saving…' : 'Save contact'}
          </button>
          <button type="button" className="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}

const FIELD_HINTS: Record<CustomField['type'], string> = {
  string: 'Text. Empty clears it.',
  number: 'A number, e.g. 12.5. Empty clears it.',
  date: 'yyyy-mm-dd or dd/mm/yyyy. Empty clears it.',
  boolean: 'true or false. Empty clears it.',
  location: 'A city name. Empty clears it.',
  phone: 'International format, e.g. +33612345678. Empty clears it.',
  array: 'A JSON list, e.g. ["a", "b"]. Empty clears it.',
};

/** The value as `POST /api/leads` takes it: text, except an array field's JSON list (text the server refuses when it is not one). */
function fieldValue(field: CustomField, text: string): unknown {
  if (field.type !== 'array' || text.trim() === '') return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
