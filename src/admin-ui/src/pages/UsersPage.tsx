import { type FormEvent, useState } from 'react';
import { api, errorMessage } from '../api';
import { Badge } from '../components/Badge';
import { ConfirmButton } from '../components/Confirm';
import { FormAlert, SelectField, TextField, useFormErrors } from '../components/Form';
import { PageHeader } from '../components/PageHeader';
import { EmptyState, ErrorState, Loading } from '../components/States';
import { Table } from '../components/Table';
import { formatDate } from '../format';
import { useApi } from '../hooks';
import { useSession } from '../session';
import type { Role, User, UserInput } from '../types';

export function UsersPage() {
  const { session } = useSession();
  const users = useApi<{ items: User[] }>('/users');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [busy, setBusy] = useState(false);
  const [invited, setInvited] = useState<string | null>(null);
  const [removeError, setRemoveError] = useState<string | null>(null);
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
              cell: (u) => <Badge tone={u.role === 'admin' ? 'violet' : 'gray'}>{u.role === 'admin' ? 'Administrator' : 'Member'}</Badge>,
            },
            { header: 'Added', className: 'nowrap', cell: (u) => formatDate(u.createdAt) },
            {
              header: 'Actions',
              className: 'actions',
              cell: (u) =>
                u.id === session.user.id ? null : <ConfirmButton label="Remove" confirmLabel="Remove user" onConfirm={() => remove(u)} />,
            },
          ]}
        />
      )}
    </>
  );
}
