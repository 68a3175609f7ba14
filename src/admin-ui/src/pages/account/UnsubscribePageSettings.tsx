import { type FormEvent, useState } from 'react';
import { api } from '../../api';
import { FormAlert, TextAreaField, TextField, useFormErrors } from '../../components/Form';
import type { Account } from '../../types';

type PageTexts = Account['unsubscribePage'];

/** The page's members in the order a recipient meets them, with their labels. */
const MEMBERS: { key: keyof PageTexts; label: string; long?: boolean }[] = [
  { key: 'lang', label: 'Language tag' },
  { key: 'confirmTitle', label: 'Confirmation title' },
  { key: 'confirmBody', label: 'Confirmation text', long: true },
  { key: 'confirmButton', label: 'Button' },
  { key: 'doneTitle', label: 'Unsubscribed title' },
  { key: 'doneBody', label: 'Unsubscribed text', long: true },
  { key: 'testBody', label: 'Text for the link of a test message', long: true },
];

/**
 * The recipients' unsubscribe page of the account (issue 13, Authoring): its language and
 * texts, under the account's name. A cleared text goes back to the English default.
 */
export function UnsubscribePageSettings({
  account,
  canEdit,
  onSaved,
}: {
  account: Account;
  canEdit: boolean;
  onSaved: (a: Account) => void;
}) {
  const [texts, setTexts] = useState<PageTexts>(account.unsubscribePage);
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  const errors = useFormErrors();

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setSaved(false);
    errors.clear();
    try {
      const updated = await api.patch<Account>('/account', { unsubscribePage: texts });
      onSaved(updated);
      setTexts(updated.unsubscribePage);
      setSaved(true);
    } catch (err) {
      errors.set(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card" aria-labelledby="unsubscribe-page-title">
      <h2 id="unsubscribe-page-title">Unsubscribe page</h2>
      <p className="muted">
        What recipients read after the unsubscribe link of a message, under the account name <strong>{account.name}</strong>. Clear a text
        to go back to the English default.
      </p>
      {canEdit ? (
        <form onSubmit={submit} noValidate>
          <div className="grid-2">
            {MEMBERS.map(({ key, label, long }) => {
              const common = {
                label,
                value: texts[key],
                error: errors.get(`/unsubscribePage/${key}`),
                maxLength: 500,
              };
              return long ? (
                <TextAreaField key={key} {...common} rows={2} onChange={(e) => setTexts({ ...texts, [key]: e.target.value })} />
              ) : (
                <TextField
                  key={key}
                  {...common}
                  onChange={(e) => setTexts({ ...texts, [key]: e.target.value })}
                  hint={key === 'lang' ? 'The page’s language, e.g. en, fr or pt-BR (its lang attribute).' : undefined}
                />
              );
            })}
          </div>
          <FormAlert errors={errors} shown={MEMBERS.map((m) => `/unsubscribePage/${m.key}`)} />
          {saved && (
            <p className="alert alert--success" role="status">
              Unsubscribe page saved.
            </p>
          )}
          <div className="form-actions">
            <button type="submit" className="button button--primary" disabled={busy}>
              {busy ? 'Saving…' : 'Save unsubscribe page'}
            </button>
          </div>
        </form>
      ) : (
        <dl className="definition-list">
          {MEMBERS.map(({ key, label }) => (
            <div key={key}>
              <dt>{label}</dt>
              <dd>{account.unsubscribePage[key]}</dd>
            </div>
          ))}
        </dl>
      )}
    </section>
  );
}
