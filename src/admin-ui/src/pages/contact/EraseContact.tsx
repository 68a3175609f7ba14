import { type FormEvent, useEffect, useRef, useState } from 'react';
import { useNavigate } from 'react-router';
import { api, errorMessage } from '../../api';
import type { AdminContactProfile } from '../../types';

/**
 * Erasing a contact for good (GDPR; docs/decisions.md, Erasing a contact), for administrators.
 * The confirmation asks for the contact's name typed again: the erase cannot be undone.
 */
export function EraseContact({ path, contact }: { path: string; contact: AdminContactProfile }) {
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const navigate = useNavigate();
  useEffect(() => {
    if (open) inputRef.current?.focus();
  }, [open]);

  if (!open) {
    return (
      <section className="card" aria-labelledby="erase-zone-title">
        <h2 id="erase-zone-title">Erase this contact</h2>
        <p className="muted">For a request to be forgotten (GDPR): removes everything about this contact, for good.</p>
        <button type="button" className="button button--danger-quiet" onClick={() => setOpen(true)}>
          Erase…
        </button>
      </section>
    );
  }
  const matches = typed.trim() === contact.name;
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!matches) return;
    setBusy(true);
    setError(null);
    try {
      await api.del(path);
      navigate('/contacts');
    } catch (err) {
      setError(errorMessage(err));
      setBusy(false);
    }
  };
  return (
    <section className="card" role="dialog" aria-labelledby="erase-title">
      <h2 id="erase-title">Erase {contact.name}?</h2>
      <p>
        The contact, their addresses, tags, field and KPI values, notes, events, bounced addresses and the messages rendered for them are
        deleted for good. Their sends stay only as anonymous counts in the campaign statistics; sends still waiting are cancelled. This
        cannot be undone.
      </p>
      <form onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor="erase-confirm">
            Type <strong>{contact.name}</strong> to confirm
          </label>
          <input
            id="erase-confirm"
            ref={inputRef}
            type="text"
            autoComplete="off"
            value={typed}
            onChange={(e) => setTyped(e.target.value)}
          />
        </div>
        {error && (
          <p className="alert alert--error" role="alert">
            {error}
          </p>
        )}
        <div className="form-actions">
          <button type="submit" className="button button--danger" disabled={!matches || busy}>
            {busy ? 'Erasing…' : 'Erase for good'}
          </button>
          <button type="button" className="button" onClick={() => setOpen(false)}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}
