import { type FormEvent, useState } from 'react';
import { api } from '../api';
import { FormAlert, TextField, useFormErrors } from '../components/Form';
import { useTitle } from '../hooks';
import type { LoginInput, Session } from '../types';

export function LoginPage({ onSignedIn, expired }: { onSignedIn: (session: Session) => void; expired?: boolean }) {
  useTitle('Sign in');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const errors = useFormErrors();

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    errors.clear();
    try {
      onSignedIn(await api.post<Session>('/login', { email: email.trim(), password } satisfies LoginInput));
    } catch (err) {
      errors.set(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="login">
      <main className="login__card">
        <div className="brand brand--large">
          <span className="brand__mark" aria-hidden="true">
            H
          </span>
          <span className="brand__name">Herald</span>
        </div>
        <h1>Sign in to the admin panel</h1>
        {expired && !errors.error && (
          <p className="alert alert--info" role="status">
            Your session has ended. Please sign in again.
          </p>
        )}
        <form onSubmit={submit} noValidate>
          <TextField
            label="Email"
            type="email"
            autoComplete="username"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            error={errors.get('/email')}
            required
            autoFocus
          />
          <TextField
            label="Password"
            type="password"
            autoComplete="current-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            error={errors.get('/password')}
            required
          />
          <FormAlert errors={errors} shown={['/email', '/password']} />
          <button type="submit" className="button button--primary button--block" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
      </main>
    </div>
  );
}
