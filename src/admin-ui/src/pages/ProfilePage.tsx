import { type FormEvent, useState } from 'react';
import { api } from '../api';
import { FormAlert, TextField, useFormErrors } from '../components/Form';
import { PageHeader } from '../components/PageHeader';
import { useSession } from '../session';
import type { OwnPasswordInput } from '../types';

/** The signed-in user's own settings: their password (docs/admin-api.md, Users). */
export function ProfilePage() {
  const { session } = useSession();
  const [currentPassword, setCurrentPassword] = useState('');
  const [newPassword, setNewPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [changed, setChanged] = useState(false);
  const errors = useFormErrors();

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setChanged(false);
    errors.clear();
    try {
      await api.post('/profile/password', { currentPassword, newPassword } satisfies OwnPasswordInput);
      setCurrentPassword('');
      setNewPassword('');
      setChanged(true);
    } catch (err) {
      errors.set(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <PageHeader
        title="Your profile"
        meta={
          <span className="muted">
            {session.user.email} · {session.user.role === 'admin' ? 'Administrator' : 'Member'} of {session.account.name}
          </span>
        }
      />
      <section className="card" aria-labelledby="password-title">
        <h2 id="password-title">Change your password</h2>
        <form onSubmit={submit} noValidate>
          <TextField
            label="Current password"
            type="password"
            value={currentPassword}
            onChange={(e) => setCurrentPassword(e.target.value)}
            error={errors.get('/currentPassword')}
            autoComplete="current-password"
            required
          />
          <TextField
            label="New password"
            type="password"
            value={newPassword}
            onChange={(e) => setNewPassword(e.target.value)}
            error={errors.get('/newPassword')}
            autoComplete="new-password"
            hint="At least 8 characters. Your other sessions are signed out; this one stays."
            required
          />
          <FormAlert errors={errors} shown={['/currentPassword', '/newPassword']} />
          <div className="form-actions">
            <button type="submit" className="button button--primary" disabled={busy}>
              {busy ? 'Changing…' : 'Change password'}
            </button>
          </div>
        </form>
        {changed && (
          <p className="alert alert--success" role="status">
            Your password is changed. Your other sessions are signed out.
          </p>
        )}
      </section>
    </>
  );
}
