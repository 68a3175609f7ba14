import { type FormEvent, useState } from 'react';
import { errorMessage } from '../api';
import { ConfirmButton } from './Confirm';
import { TextField } from './Form';

/**
 * The actions of a definition row (a custom field, a KPI): Rename opens a small form in the
 * row (Enter saves, Cancel closes it), Delete asks first. A refusal (a taken name, a field a
 * segment uses) is shown in the row.
 */
export function RenameDelete({
  name,
  what,
  onRename,
  onDelete,
}: {
  /** The current name, the form's first value. */
  name: string;
  /** What the row is, for labels: "field City", "KPI ltv". */
  what: string;
  onRename: (name: string) => Promise<void>;
  onDelete: () => Promise<void>;
}) {
  const [editing, setEditing] = useState(false);
  const [value, setValue] = useState(name);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const rename = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await onRename(value.trim());
      setEditing(false);
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  const remove = async () => {
    setError(null);
    try {
      await onDelete();
    } catch (err) {
      setError(errorMessage(err));
    }
  };

  return (
    <div className="row-actions">
      {editing ? (
        <form onSubmit={rename} noValidate className="inline-form">
          <TextField
            label={`New name of ${what}`}
            value={value}
            onChange={(e) => setValue(e.target.value)}
            required
            maxLength={255}
            // The form opens on a click of Rename: the name is what the user came to change.
            autoFocus
          />
          <div className="inline-form__submit">
            <button type="submit" className="button button--small button--primary" disabled={busy}>
              {busy ? 'Saving…' : 'Save name'}
            </button>
            <button
              type="button"
              className="button button--small"
              onClick={() => {
                setEditing(false);
                setValue(name);
                setError(null);
              }}
            >
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <>
          <button
            type="button"
            className="button button--small"
            aria-label={`Rename ${what}`}
            onClick={() => {
              setValue(name);
              setEditing(true);
            }}
          >
            Rename
          </button>
          <ConfirmButton label="Delete" confirmLabel={`Delete ${what}`} onConfirm={remove} />
        </>
      )}
      {error && (
        <p className="alert alert--error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
