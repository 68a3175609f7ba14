import { type FormEvent, useState } from 'react';
import { api, errorMessage } from '../api';
import { ConfirmButton } from '../components/Confirm';
import { FormAlert, SelectField, TextField, useFormErrors } from '../components/Form';
import { PageHeader } from '../components/PageHeader';
import { EmptyState, ErrorState, Loading } from '../components/States';
import { Table } from '../components/Table';
import { formatDate } from '../format';
import { useApi } from '../hooks';
import { useSession } from '../session';
import type { Role, User, UserInput, UserPasswordInput, UserRoleInput } from '../types';

export function UsersPage() {
  const { session } = useSession();
  const users = useApi<{ items: User[] }>('/users');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [busy, setBusy] = useState(false);
  const [invited, setInvited] = useState<string | null>(null);
  const [removeError, setRemoveError] = useState<string | null>(null);
  const [resetFor, setResetFor] = useState<User | null>(null);
  const [resetDone, setResetDone] = useState<string | null>(null);
  const errors = useFormErrors();

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setInvited(null);
    errors.clear();
    try {
      await api.post('/users', { email: email.trim(), password, role } satisfies UserInput);
      setInvited(email.trim());
      setEmail('');
      setPassword('');
      await users.reload();
    } catch (err) {
      errors.set(err, '/email');
    } finally {
      setBusy(false);
    }
  };

  const remove = async (user: User) => {
    setRemoveError(null);
    try {
      await api.del(`/users/${encodeURIComponent(user.id)}`);
      await users.reload();
    } catch (err) {
      setRemoveError(`${user.email}: ${errorMessage(err)}`);
    }
  };

  const changeRole = async (user: User, newRole: Role) => {
    setRemoveError(null);
    try {
      await api.patch(`/users/${encodeURIComponent(user.id)}`, { role: newRole } satisfies UserRoleInput);
      // Stepping down oneself: the panel reloads with the member's view.
      if (user.id === session.user.id) window.location.reload();
      else await users.reload();
    } catch (err) {
      setRemoveError(`${user.email}: ${errorMessage(err)}`);
      await users.reload();
    }
  };

  const items = users.data?.items ?? [];
  return (
    <>
      <PageHeader
        title="Users"
        description="People who sign in to this panel. Administrators manage API keys and users; members do everything else."
      />
      <section className="card" aria-labelledby="invite-title">
        <h2 id="invite-title">Invite a user</h2>
        <form onSubmit={submit} noValidate className="inline-form">
          <TextField
            label="Email"
            type="email"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            error={errors.get('/email')}
            autoComplete="off"
            required
          />
          <TextField
            label="First password"
            type="password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            error={errors.get('/password')}
            autoComplete="new-password"
            hint="At least 8 characters; share it with them privately."
            required
          />
          <SelectField label="Role" value={role} onChange={(e) => setRole(e.target.value as Role)} error={errors.get('/role')}>
            <option value="member">Member</option>
            <option value="admin">Administrator</option>
          </SelectField>
          <div className="inline-form__submit">
            <button type="submit" className="button button--primary" disabled={busy}>
              {busy ? 'Inviting…' : 'Invite'}
            </button>
          </div>
          <FormAlert errors={errors} shown={['/email', '/password', '/role']} />
        </form>
        {invited && (
          <p className="alert alert--success" role="status">
            {invited} can now sign in.
          </p>
        )}
      </section>
      {resetFor && (
        <ResetPasswordForm
          user={resetFor}
          onDone={() => {
            setResetDone(resetFor.email);
            setResetFor(null);
          }}
          onCancel={() => setResetFor(null)}
        />
      )}
      {resetDone && (
        <p className="alert alert--success" role="status">
          {resetDone} has a new password and was signed out everywhere. Tell them the new password privately.
        </p>
      )}
      {removeError && (
        <p className="alert alert--error" role="alert">
          {removeError}
        </p>
      )}
      {users.error ? (
        <ErrorState error={users.error} onRetry={users.reload} />
      ) : !users.data ? (
        <Loading />
      ) : items.length === 0 ? (
        <EmptyState title="No users" />
      ) : (
        <Table
          caption="Users"
          rows={items}
          rowKey={(u) => u.id}
          columns={[
            {
              header: 'Email',
              cell: (u) => (
                <>
                  {u.email} {u.id === session.user.id && <span className="muted">(you)</span>}
                </>
              ),
            },
            {
              header: 'Role',
              cell: (u) => (
                <select aria-label={`Role of ${u.email}`} value={u.role} onChange={(e) => void changeRole(u, e.target.value as Role)}>
                  <option value="member">Member</option>
                  <option value="admin">Administrator</option>
                </select>
              ),
            },
            { header: 'Added', className: 'nowrap', cell: (u) => formatDate(u.createdAt) },
            {
              header: 'Actions',
              className: 'actions',
              cell: (u) =>
                u.id === session.user.id ? null : (
                  <>
                    <button
                      type="button"
                      className="button button--small"
                      onClick={() => {
                        setResetDone(null);
                        setResetFor(u);
                      }}
                    >
                      Set password
                    </button>{' '}
                    <ConfirmButton label="Remove" confirmLabel="Remove user" onConfirm={() => remove(u)} />
                  </>
                ),
            },
          ]}
        />
      )}
    </>
  );
}

/** An administrator sets another user's password (a forgotten one); that user is signed out everywhere. */
function ResetPasswordForm({ user, onDone, onCancel }: { user: User; onDone: () => void; onCancel: () => void }) {
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const errors = useFormErrors();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    errors.clear();
    try {
      await api.post(`/users/${encodeURIComponent(user.id)}/password`, { password } satisfies UserPasswordInput);
      onDone();
    } catch (err) {
      errors.set(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="card" aria-labelledby="reset-title">
      <h2 id="reset-title">New password for {user.email}</h2>
      <form onSubmit={submit} noValidate className="inline-form">
        <TextField
          label="New password"
          type="password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          error={errors.get('/password')}
          autoComplete="new-password"
          hint="At least 8 characters; they are signed out everywhere."
          required
        />
        <div className="inline-form__submit">
          <button type="submit" className="button button--primary" disabled={busy}>
            {busy ? 'Saving…' : 'Set password'}
          </button>{' '}
          <button type="button" className="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
        <FormAlert errors={errors} shown={['/password']} />
      </form>
    </section>
  );
}
