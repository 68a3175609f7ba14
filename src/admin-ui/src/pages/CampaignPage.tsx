import { type FormEvent, useEffect, useState } from 'react';
import { Link, useLocation, useNavigate, useParams, useSearchParams } from 'react-router';
import { ApiError, api, errorMessage } from '../api';
import { CHANNEL_UI } from '../channels/registry';
import { Badge } from '../components/Badge';
import { ConfirmButton } from '../components/Confirm';
import { CopyButton } from '../components/CopyButton';
import { FormAlert, useFormErrors } from '../components/Form';
import { PageHeader } from '../components/PageHeader';
import { ErrorState, Loading } from '../components/States';
import { formatDateTime } from '../format';
import { useApi } from '../hooks';
import type { Campaign, CampaignDuplicated } from '../types';
import { triggerSummary } from './CampaignsPage';
import { CampaignEditor } from './campaign/CampaignEditor';
import { CampaignStats } from './campaign/CampaignStats';
import { type CampaignForm, emptyForm, formOf, inputOf, SHOWN_PATHS, sameForm } from './campaign/model';
import { PreviewPanel } from './campaign/PreviewPanel';
import { WebhookDeliveries } from './campaign/WebhookDeliveries';

const TABS = [
  { id: 'settings', label: 'Settings' },
  { id: 'statistics', label: 'Statistics' },
  { id: 'webhooks', label: 'Webhook deliveries' },
] as const;

/**
 * One campaign: /campaigns/new creates it, /campaigns/:id edits it (the address ends with the
 * id, as the spec asks). Statistics and webhook deliveries are tabs kept in ?tab=.
 */
export function CampaignPage() {
  const { id } = useParams();
  const campaign = useApi<Campaign>(id ? `/campaigns/${encodeURIComponent(id)}` : null);
  if (!id) return <CampaignScreen campaign={undefined} onSaved={() => undefined} />;
  if (campaign.error) {
    return (
      <>
        <BackLink />
        <ErrorState page error={campaign.error} onRetry={campaign.reload} />
      </>
    );
  }
  if (!campaign.data) return <Loading />;
  return <CampaignScreen key={campaign.data.id} campaign={campaign.data} onSaved={campaign.setData} />;
}

function BackLink() {
  return (
    <Link to="/campaigns" className="back-link">
      ← Campaigns
    </Link>
  );
}

function CampaignScreen({ campaign, onSaved }: { campaign: Campaign | undefined; onSaved: (c: Campaign) => void }) {
  const navigate = useNavigate();
  const location = useLocation();
  const [params] = useSearchParams();
  const tab = campaign ? (TABS.find((t) => t.id === params.get('tab'))?.id ?? 'settings') : 'settings';
  const initial = campaign ? formOf(campaign) : emptyForm();
  const [saved, setSaved] = useState<CampaignForm>(initial);
  const [form, setForm] = useState<CampaignForm>(initial);
  const [busy, setBusy] = useState<'save' | 'activate' | 'duplicate' | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const errors = useFormErrors();
  const activationErrors = useFormErrors();
  const dirty = !sameForm(form, saved);
  // The webhook signing secret is only given when the campaign is created (or duplicated).
  const { webhookSecret, duplicated } = (location.state as { webhookSecret?: string; duplicated?: boolean } | null) ?? {};

  useEffect(() => {
    if (!notice) return;
    const timer = setTimeout(() => setNotice(null), 4000);
    return () => clearTimeout(timer);
  }, [notice]);

  // Leaving with unsaved edits asks first (closing the tab or reloading).
  useEffect(() => {
    if (!dirty) return;
    const warn = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, [dirty]);

  const save = async (e: FormEvent) => {
    e.preventDefault();
    setBusy('save');
    errors.clear();
    activationErrors.clear();
    try {
      if (!campaign) {
        const created = await api.post<{ id: string; webhookSecret: string }>('/campaigns', inputOf(form));
        navigate(`/campaigns/${encodeURIComponent(created.id)}`, { replace: true, state: { webhookSecret: created.webhookSecret } });
        return;
      }
      const updated = await api.patch<Campaign>(`/campaigns/${encodeURIComponent(campaign.id)}`, inputOf(form));
      setSaved(formOf(updated));
      setForm(formOf(updated));
      onSaved(updated);
      setNotice('Campaign saved.');
    } catch (err) {
      errors.set(err);
    } finally {
      setBusy(null);
    }
  };

  /** Activation saves pending edits in the same call, so what goes live is what is on screen. */
  const setActive = async (active: boolean) => {
    if (!campaign) return;
    setBusy('activate');
    errors.clear();
    activationErrors.clear();
    try {
      const body = dirty ? { ...inputOf(form), active } : { active };
      const updated = await api.patch<Campaign>(`/campaigns/${encodeURIComponent(campaign.id)}`, body);
      setSaved(formOf(updated));
      setForm(formOf(updated));
      onSaved(updated);
      setNotice(active ? 'Campaign activated: the API can trigger it now.' : 'Campaign deactivated: triggers are refused.');
    } catch (err) {
      activationErrors.set(err);
      // Problems with other settings (sent along when the form had edits) show on the form.
      if (err instanceof ApiError && err.details.some((d) => d.path !== '/active')) errors.set(err);
    } finally {
      setBusy(null);
    }
  };

  /** The copy opens at once, inactive, with its own signing secret shown once (as after create). */
  const duplicate = async () => {
    if (!campaign) return;
    setBusy('duplicate');
    setActionError(null);
    try {
      const copy = await api.post<CampaignDuplicated>(`/campaigns/${encodeURIComponent(campaign.id)}/duplicate`);
      navigate(`/campaigns/${encodeURIComponent(copy.id)}`, { state: { webhookSecret: copy.webhookSecret, duplicated: true } });
    } catch (err) {
      setActionError(errorMessage(err));
    } finally {
      setBusy(null);
    }
  };

  /** Deleting cancels the sends not gone out yet (docs/decisions.md, Editing and deleting). */
  const remove = async () => {
    if (!campaign) return;
    setActionError(null);
    try {
      await api.del(`/campaigns/${encodeURIComponent(campaign.id)}`);
      navigate('/campaigns', { state: { notice: `Campaign “${campaign.name}” deleted.` } });
    } catch (err) {
      setActionError(errorMessage(err));
    }
  };

  const activationFailure = activationErrors.error;
  const activationError =
    activationErrors.get('/active') ??
    (activationFailure && !(activationFailure instanceof ApiError && activationFailure.details.length > 0)
      ? errorMessage(activationFailure)
      : undefined);
  return (
    <>
      <BackLink />
      <PageHeader
        title={campaign ? campaign.name : 'New campaign'}
        meta={
          campaign && (
            <>
              <Badge tone={campaign.active ? 'green' : 'gray'} dot>
                {campaign.active ? 'Active' : 'Inactive'}
              </Badge>
              <Badge tone={CHANNEL_UI[campaign.channel].tone}>{CHANNEL_UI[campaign.channel].label}</Badge>
              <span className="muted">{triggerSummary(campaign)}</span>
              <span className="id-line">
                <span className="muted">Campaign id</span>{' '}
                <code className="id" data-testid="campaign-id">
                  {campaign.id}
                </code>
                <CopyButton text={campaign.id} label="Copy id" className="button button--tiny" />
              </span>
            </>
          )
        }
        actions={
          campaign && (
            <div className="activation">
              {tab === 'settings' && (
                <button type="submit" form="campaign-form" className="button" disabled={busy !== null || !dirty}>
                  {busy === 'save' ? 'Saving…' : 'Save changes'}
                </button>
              )}
              <button
                type="button"
                className={`button ${campaign.active ? '' : 'button--primary'}`}
                onClick={() => void setActive(!campaign.active)}
                disabled={busy !== null}
                aria-describedby={activationError ? 'activation-error' : undefined}
              >
                {busy === 'activate' ? 'Saving…' : campaign.active ? 'Deactivate' : dirty ? 'Save and activate' : 'Activate'}
              </button>
              <button type="button" className="button" onClick={() => void duplicate()} disabled={busy !== null}>
                {busy === 'duplicate' ? 'Duplicating…' : 'Duplicate'}
              </button>
              <ConfirmButton label="Delete" confirmLabel="Delete campaign" className="button button--danger-quiet" onConfirm={remove} />
            </div>
          )
        }
      />
      {activationError && (
        <p className="alert alert--error" id="activation-error" role="alert">
          {activationError}
        </p>
      )}
      {actionError && (
        <p className="alert alert--error" role="alert">
          {actionError}
        </p>
      )}
      {notice && (
        <p className="alert alert--success" role="status">
          {notice}
        </p>
      )}
      {webhookSecret && campaign && CHANNEL_UI[campaign.channel].webhooks && (
        <section className="card card--success" aria-labelledby="secret-title">
          <h2 id="secret-title">{duplicated ? 'Campaign duplicated' : 'Campaign created'}</h2>
          <p>
            Its webhooks are signed with this secret (Standard Webhooks). Copy it now to verify signatures on your side: it is shown only
            once.
          </p>
          <div className="secret">
            <label htmlFor="webhook-secret" className="visually-hidden">
              Webhook signing secret
            </label>
            <input
              id="webhook-secret"
              type="text"
              className="secret__value"
              readOnly
              value={webhookSecret}
              onFocus={(e) => e.currentTarget.select()}
            />
            <CopyButton text={webhookSecret} label="Copy secret" className="button" />
          </div>
        </section>
      )}

      {campaign && (
        <nav className="tabs" aria-label="Campaign sections">
          {TABS.map((t) => (
            <Link
              key={t.id}
              className="tabs__tab"
              aria-current={tab === t.id ? 'page' : undefined}
              to={{ search: t.id === 'settings' ? '' : `?tab=${t.id}` }}
              replace
            >
              {t.label}
            </Link>
          ))}
        </nav>
      )}

      {tab === 'settings' && (
        <form id="campaign-form" onSubmit={save} noValidate className="campaign-layout">
          <div className="campaign-layout__main">
            <CampaignEditor form={form} setForm={setForm} errors={errors} />
            <div className="form-footer">
              <FormAlert errors={errors} shown={SHOWN_PATHS} />
              <div className="form-actions">
                <button type="submit" className="button button--primary" disabled={busy !== null || (campaign !== undefined && !dirty)}>
                  {busy === 'save' ? 'Saving…' : campaign ? 'Save changes' : 'Create campaign'}
                </button>
                {dirty && campaign && (
                  <button
                    type="button"
                    className="button button--quiet"
                    onClick={() => {
                      setForm(saved);
                      errors.clear();
                    }}
                  >
                    Discard changes
                  </button>
                )}
                {campaign && <span className="muted small">Last saved {formatDateTime(campaign.updatedAt)}</span>}
              </div>
            </div>
          </div>
          <div className="campaign-layout__side">
            <PreviewPanel campaignId={campaign?.id} form={form} dirty={dirty} />
          </div>
        </form>
      )}
      {campaign && tab === 'statistics' && <CampaignStats campaignId={campaign.id} />}
      {campaign && tab === 'webhooks' && <WebhookDeliveries campaignId={campaign.id} hasWebhooks={campaign.webhooks.length > 0} />}
    </>
  );
}
