import type { Dispatch, SetStateAction } from 'react';
import { CheckboxField, FieldSet, SelectField, TextAreaField, TextField, type FormErrors } from '../../components/Form';
import { MAX_WEBHOOKS, type CampaignForm } from './model';

const VARIABLES_HINT = (
  <>
    Liquid template: <code>{'{{ contact.name }}'}</code>, <code>{'{{ contact.email }}'}</code>, <code>{'{{ contact.fields.city }}'}</code>, <code>{'{{ contact.kpis.ltv }}'}</code>, <code>{'{{ contact.metadata.plan }}'}</code>, <code>{'{{ unsubscribe_url }}'}</code>.
  </>
);

/** The campaign's settings, grouped as the spec's settings table. Errors come by API path. */
export function CampaignEditor({ form, setForm, errors }: { form: CampaignForm; setForm: Dispatch<SetStateAction<CampaignForm>>; errors: FormErrors }) {
  const set = <K extends keyof CampaignForm>(key: K, value: CampaignForm[K]) => setForm((f) => ({ ...f, [key]: value }));

  // Blank webhook rows are not sent, so the API's index of a row counts only the filled ones.
  const webhookError = (row: number) => {
    if (!form.webhooks[row]?.trim()) return undefined;
    const sentIndex = form.webhooks.slice(0, row).filter((w) => w.trim()).length;
    return errors.get(`/webhooks/${sentIndex}`);
  };

  return (
    <div className="stack">
      <section className="card" aria-labelledby="general-title">
        <h2 id="general-title">General</h2>
        <TextField label="Name" value={form.name} onChange={(e) => set('name', e.target.value)} error={errors.get('/name')} required maxLength={255} placeholder="e.g. Welcome email" />
        <FieldSet legend="Channel" error={errors.get('/channel')} className="radio-row">
          <label className="radio">
            <input type="radio" name="channel" value="email" checked={form.channel === 'email'} onChange={() => set('channel', 'email')} />
            Email
          </label>
          <label className="radio">
            <input type="radio" name="channel" value="whatsapp" checked={form.channel === 'whatsapp'} onChange={() => set('channel', 'whatsapp')} />
            WhatsApp <span className="muted">(paid plan)</span>
          </label>
        </FieldSet>
      </section>

      <section className="card" aria-labelledby="trigger-title">
        <h2 id="trigger-title">Trigger</h2>
        <div className="grid-2">
          <SelectField label="Schedule type" value={form.schedule} onChange={(e) => set('schedule', e.target.value as CampaignForm['schedule'])} error={errors.get('/schedule')} hint="Only API Trigger campaigns accept POST /api/campaigns/trigger.">
            <option value="api">API Trigger</option>
            <option value="manual">Manual</option>
          </SelectField>
          <SelectField label="Trigger mode" value={form.mode} onChange={(e) => set('mode', e.target.value as CampaignForm['mode'])} error={errors.get('/mode')} hint={form.mode === 'delay' ? 'Waits, then sends; a new trigger restarts the wait.' : 'Sends as soon as the call is received.'}>
            <option value="immediate">Immediate</option>
            <option value="delay">Delay</option>
          </SelectField>
        </div>
        {form.mode === 'delay' && (
          <TextField label="Delay (seconds)" type="number" inputMode="numeric" min={1} max={2592000} step={1} value={form.delaySeconds} onChange={(e) => set('delaySeconds', e.target.value)} error={errors.get('/delaySeconds')} hint="1 second to 30 days (2,592,000)." className="field--narrow" />
        )}
        {form.mode !== 'delay' && errors.get('/delaySeconds') && <p className="field__error">{errors.get('/delaySeconds')}</p>}
        <CheckboxField label="Allow lead re-entry" hint="Off: each contact receives this campaign once; later triggers are Rejected." checked={form.reentry} onChange={(e) => set('reentry', e.target.checked)} error={errors.get('/reentry')} />
        {form.reentry && (
          <TextField label="Cooldown period (days)" type="number" inputMode="numeric" min={0} max={3650} step={1} value={form.cooldownDays} onChange={(e) => set('cooldownDays', e.target.value)} error={errors.get('/cooldownDays')} hint="Days before the same contact can receive it again (0 to 3650)." className="field--narrow" />
        )}
        {!form.reentry && errors.get('/cooldownDays') && <p className="field__error">{errors.get('/cooldownDays')}</p>}
      </section>

      {form.channel === 'email' ? (
        <section className="card" aria-labelledby="message-title">
          <h2 id="message-title">Email message</h2>
          <div className="grid-2">
            <TextField label="From" value={form.from} onChange={(e) => set('from', e.target.value)} error={errors.get('/from')} placeholder="Acme <news@acme.com>" autoComplete="off" />
            <TextField label="Subject" value={form.subject} onChange={(e) => set('subject', e.target.value)} error={errors.get('/subject')} placeholder="Welcome, {{ contact.name }}" />
          </div>
          <TextAreaField label="HTML body" className="field--code" rows={12} spellCheck={false} value={form.html} onChange={(e) => set('html', e.target.value)} error={errors.get('/html')} hint={VARIABLES_HINT} />
          <TextAreaField label="Plain-text body" className="field--code" rows={5} value={form.text} onChange={(e) => set('text', e.target.value)} error={errors.get('/text')} hint="Optional: made from the HTML when empty." />
        </section>
      ) : (
        <section className="card" aria-labelledby="message-title">
          <h2 id="message-title">WhatsApp template</h2>
          <p className="muted">An approved message template of your WhatsApp Business account.</p>
          <div className="grid-2">
            <TextField label="Template name" value={form.whatsappTemplate} onChange={(e) => set('whatsappTemplate', e.target.value)} error={errors.get('/whatsappTemplate')} placeholder="order_update" hint="Lowercase letters, digits and underscores." />
            <TextField label="Language" value={form.language} onChange={(e) => set('language', e.target.value)} error={errors.get('/language')} placeholder="en_US" />
          </div>
          <FieldSet legend="Body parameters" hint={<>One value per {'{{1}}'}, {'{{2}}'} … of the template, in order; Liquid works here too.</>} error={errors.get('/whatsappParams')}>
            {form.whatsappParams.map((param, i) => (
              <div key={i} className="row-field">
                <TextField label={`Parameter ${i + 1}`} value={param} onChange={(e) => set('whatsappParams', form.whatsappParams.map((p, j) => (j === i ? e.target.value : p)))} error={errors.get(`/whatsappParams/${i}`)} />
                <button type="button" className="button button--small button--quiet" onClick={() => set('whatsappParams', form.whatsappParams.filter((_, j) => j !== i))} aria-label={`Remove parameter ${i + 1}`}>
                  Remove
                </button>
              </div>
            ))}
            <button type="button" className="button button--small" onClick={() => set('whatsappParams', [...form.whatsappParams, ''])}>
              Add parameter
            </button>
          </FieldSet>
        </section>
      )}

      {form.channel === 'email' && (
        <section className="card" aria-labelledby="webhooks-title">
          <h2 id="webhooks-title">Webhooks</h2>
          <p className="muted">Up to {MAX_WEBHOOKS} addresses receive the contact's data with every send, signed the Standard Webhooks way.</p>
          <FieldSet legend="Webhook URLs" className="visually-hidden-legend" error={errors.get('/webhooks')}>
            {form.webhooks.length === 0 && <p className="muted">No webhooks.</p>}
            {form.webhooks.map((url, i) => (
              <div key={i} className="row-field">
                <TextField label={`Webhook ${i + 1}`} type="url" value={url} placeholder="https://example.com/herald" onChange={(e) => set('webhooks', form.webhooks.map((w, j) => (j === i ? e.target.value : w)))} error={webhookError(i)} />
                <button type="button" className="button button--small button--quiet" onClick={() => set('webhooks', form.webhooks.filter((_, j) => j !== i))} aria-label={`Remove webhook ${i + 1}`}>
                  Remove
                </button>
              </div>
            ))}
            {form.webhooks.length < MAX_WEBHOOKS && (
              <button type="button" className="button button--small" onClick={() => set('webhooks', [...form.webhooks, ''])}>
                Add webhook
              </button>
            )}
          </FieldSet>
        </section>
      )}
    </div>
  );
}
