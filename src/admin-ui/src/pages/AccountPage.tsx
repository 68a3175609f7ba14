import { type FormEvent, useState } from 'react';
import { api } from '../api';
import { Badge } from '../components/Badge';
import { FormAlert, TextField, useFormErrors } from '../components/Form';
import { PageHeader } from '../components/PageHeader';
import { ErrorState, Loading } from '../components/States';
import { formatNumber } from '../format';
import { useApi } from '../hooks';
import { useIsAdmin } from '../session';
import type { Account, AccountPatch } from '../types';
import { UnsubscribePageSettings } from './account/UnsubscribePageSettings';

export function AccountPage() {
  const account = useApi<Account>('/account');
  const isAdmin = useIsAdmin();
  if (account.error) return <ErrorState error={account.error} onRetry={account.reload} />;
  if (!account.data) return <Loading />;
  const a = account.data;
  const share = a.allowance ? Math.min(100, Math.round((a.usedThisMonth / a.allowance) * 100)) : 0;
  const month = new Date().toLocaleDateString(undefined, { month: 'long', year: 'numeric', timeZone: 'UTC' });

  return (
    <>
      <PageHeader
        title={a.name}
        documentTitle="Account"
        meta={
          <>
            <span className="muted">Account</span> <code className="id">{a.id}</code>
          </>
        }
      />
      <div className="grid-2 grid-2--cards">
        <section className="card" aria-labelledby="plan-title">
          <h2 id="plan-title">Plan</h2>
          <p className="plan">
            <Badge tone={a.plan === 'pro' ? 'violet' : 'gray'}>{a.plan === 'pro' ? 'Pro' : 'Free'}</Badge>
            <span className="muted">{a.plan === 'pro' ? 'Email and WhatsApp.' : 'Email only. WhatsApp campaigns need the pro plan.'}</span>
          </p>
          <h3 className="subhead">Sends in {month}</h3>
          {a.allowance === null ? (
            <p>
              <strong className="big-number">{formatNumber(a.usedThisMonth)}</strong>{' '}
              <span className="muted">sends · no monthly allowance</span>
            </p>
          ) : (
            <>
              <p>
                <strong className="big-number">{formatNumber(a.usedThisMonth)}</strong>{' '}
                <span className="muted">of {formatNumber(a.allowance)} sends used</span>
              </p>
              <div
                className={`meter${share >= 90 ? ' meter--high' : ''}`}
                role="meter"
                aria-valuemin={0}
                aria-valuemax={a.allowance}
                aria-valuenow={a.usedThisMonth}
                aria-label="Monthly allowance used"
              >
                <span style={{ width: `${share}%` }} />
              </div>
              <p className="muted small">
                Each trigger counts once; cancelled, rejected and opted-out sends do not. Past the allowance, triggers are refused (402)
                until next month (UTC).
              </p>
            </>
          )}
        </section>
        <WhatsappSettings account={a} canEdit={isAdmin} onSaved={account.setData} />
      </div>
      <UnsubscribePageSettings account={a} canEdit={isAdmin} onSaved={account.setData} />
    </>
  );
}

function WhatsappSettings({ account, canEdit, onSaved }: { account: Account; canEdit: boolean; onSaved: (a: Account) => void }) {
  const [phoneNumberId, setPhoneNumberId] = useState(account.whatsapp.phoneNumberId ?? '');
  const [token, setToken] = useState('');
  const [appSecret, setAppSecret] = useState('');
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  const errors = useFormErrors();

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setSaved(false);
    errors.clear();
    try {
      const whatsapp: AccountPatch['whatsapp'] = { phoneNumberId: phoneNumberId.trim(), token: token.trim() };
      if (appSecret.trim()) whatsapp.appSecret = appSecret.trim();
      onSaved(await api.patch<Account>('/account', { whatsapp } satisfies AccountPatch));
      setToken('');
      setAppSecret('');
      setSaved(true);
    } catch (err) {
      errors.set(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card" aria-labelledby="whatsapp-title">
      <h2 id="whatsapp-title">WhatsApp</h2>
      <p>
        {account.whatsapp.configured ? (
          <Badge tone="green" dot>
            Connected
          </Badge>
        ) : (
          <Badge tone="gray" dot>
            Not connected
          </Badge>
        )}{' '}
        <span className="muted">
          {account.whatsapp.configured
            ? `Phone number id ${account.whatsapp.phoneNumberId}`
            : 'Without a connection, WhatsApp messages go to the outbox.'}
        </span>
      </p>
      {account.plan === 'free' && (
        <p className="alert alert--info">You can prepare WhatsApp campaigns on the free plan, but switching one on needs the pro plan.</p>
      )}
      {canEdit ? (
        <form onSubmit={submit} noValidate>
          <TextField
            label="Phone number id"
            value={phoneNumberId}
            onChange={(e) => setPhoneNumberId(e.target.value)}
            error={errors.get('/whatsapp/phoneNumberId')}
            autoComplete="off"
            hint="From your WhatsApp Business account (Meta)."
          />
          <TextField
            label="Access token"
            type="password"
            value={token}
            onChange={(e) => setToken(e.target.value)}
            error={errors.get('/whatsapp/token')}
            autoComplete="new-password"
            hint={account.whatsapp.configured ? 'Stored encrypted; enter it again to change the settings.' : 'Stored encrypted.'}
          />
          <TextField
            label="App secret (optional)"
            type="password"
            value={appSecret}
            onChange={(e) => setAppSecret(e.target.value)}
            error={errors.get('/whatsapp/appSecret')}
            autoComplete="new-password"
            hint="Verifies the delivery status callbacks."
          />
          <FormAlert errors={errors} shown={['/whatsapp/phoneNumberId', '/whatsapp/token', '/whatsapp/appSecret']} />
          {saved && (
            <p className="alert alert--success" role="status">
              WhatsApp settings saved.
            </p>
          )}
          <div className="form-actions">
            <button type="submit" className="button button--primary" disabled={busy}>
              {busy ? 'Saving…' : 'Save WhatsApp settings'}
            </button>
          </div>
        </form>
      ) : (
        <p className="muted">Only administrators change these settings.</p>
      )}
    </section>
  );
}
