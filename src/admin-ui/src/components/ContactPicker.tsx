import { useId, useState } from 'react';
import { query } from '../api';
import { useApi, useDebounced } from '../hooks';
import type { ContactSummary, Page } from '../types';
import { Loading } from './States';

/**
 * Chooses one contact: a search box (email, phone or name, as the contact list searches) and
 * the matches as radio buttons, the newest contacts before anything is typed.
 */
export function ContactPicker({
  value,
  onChange,
  label = 'Contact',
  error,
}: {
  value: ContactSummary | null;
  onChange: (contact: ContactSummary | null) => void;
  label?: string;
  error?: string;
}) {
  const id = useId();
  const [q, setQ] = useState('');
  const search = useDebounced(q.trim(), 300);
  const results = useApi<Page<ContactSummary>>(`/contacts${query({ q: search, limit: 5 })}`);
  const items = results.data?.items ?? [];
  const shown = value && !items.some((c) => c.id === value.id) ? [value, ...items] : items;

  return (
    <div className={`picker${error ? ' field--invalid' : ''}`}>
      <div className="field">
        <label htmlFor={`${id}-q`}>{label}</label>
        <input
          id={`${id}-q`}
          type="search"
          value={q}
          onChange={(e) => setQ(e.target.value)}
          onKeyDown={(e) => e.key === 'Enter' && e.preventDefault()}
          placeholder="Search by email, phone or name"
          aria-describedby={error ? `${id}-error` : undefined}
          autoComplete="off"
        />
      </div>
      <fieldset className="picker__results">
        <legend className="visually-hidden">{`${label}: matching contacts`}</legend>
        {results.loading && !results.data ? (
          <Loading label="Searching…" />
        ) : shown.length === 0 ? (
          <p className="muted">{search ? `No contact matches “${search}”.` : 'No contacts yet: they arrive through POST /api/leads.'}</p>
        ) : (
          shown.map((c) => (
            <label key={c.id} className={`picker__option${value?.id === c.id ? ' picker__option--chosen' : ''}`}>
              <input type="radio" name={`${id}-contact`} checked={value?.id === c.id} onChange={() => onChange(c)} />
              <span>
                <strong>{c.name}</strong>
                <span className="muted"> {c.email ?? c.phone ?? c.id}</span>
              </span>
            </label>
          ))
        )}
      </fieldset>
      {error && (
        <p className="field__error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}
