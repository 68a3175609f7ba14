import { type Dispatch, type SetStateAction, type SyntheticEvent, useState } from 'react';
import { CHANNELS } from '../../../../contract/constants';
import { CHANNEL_UI } from '../../channels/registry';
import { CheckboxField, FieldSet, type FormErrors, SelectField, TextField } from '../../components/Form';
import { type CampaignForm, MAX_WEBHOOKS } from './model';
import { type TemplateTarget, VariablePicker } from './VariablePicker';

const VARIABLES_HINT = (
  <>
    Liquid template: <code>{'{{ contact.name }}'}</code>, <code>{'{{ contact.email }}'}</code>, <code>{'{{ contact.fields.city }}'}</code>,{' '}
    <code>{'{{ contact.kpis.ltv }}'}</code>, <code>{'{{ contact.metadata.plan }}'}</code>, <code>{'{{ trigger.order }}'}</code>,{' '}
    <code>{'{{ unsubscribe_url }}'}</code>.
  </>
);

/** The template field an element is (its `data-template`), or undefined for any other element. */
function templateFieldOf(element: EventTarget | null): HTMLInputElement | HTMLTextAreaElement | undefined {
  if (!(element instanceof HTMLInputElement || element instanceof HTMLTextAreaElement)) return undefined;
  return element.dataset.template ? element : undefined;
}

/**
 * The campaign's settings, grouped as the spec's settings table. Errors come by API path.
 * `triggerPaths`: the sample trigger data's keys, offered by the variable picker.
 */
export function CampaignEditor({
  form,
  setForm,
  errors,
  triggerPaths,
}: {
  form: CampaignForm;
  setForm: Dispatch<SetStateAction<CampaignForm>>;
  errors: FormErrors;
  triggerPaths: string[];
}) {
  const set = <K extends keyof CampaignForm>(key: K, value: CampaignForm[K]) => setForm((f) => ({ ...f, [key]: value }));
  const MessageSection = CHANNEL_UI[form.channel].MessageSection;
  const [target, setTarget] = useState<TemplateTarget | null>(null);

  // The picker inserts where the cursor was in the template field used last: kept on focus,
  // selection, typing and clicks inside the message section.
  const track = (e: SyntheticEvent) => {
    const element = templateFieldOf(e.target);
    if (!element) return;
    const label = element.labels?.[0]?.textContent ?? element.dataset.template ?? '';
    const end = element.value.length;
    setTarget({ element, label, start: element.selectionStart ?? end, end: element.selectionEnd ?? end });
  };

  const insert = (at: TemplateTarget, text: string) => {
    const { element } = at;
    const key = element.dataset.template ?? '';
    const next = element.value.slice(0, at.start) + text + element.value.slice(at.end);
    const param = /^whatsappParams\.(\d+)$/.exec(key);
    if (param) {
      const index = Number(param[1]);
      setForm((f) => ({ ...f, whatsappParams: f.whatsappParams.map((p, i) => (i === index ? next : p)) }));
    } else if (key === 'subject' || key === 'html' || key === 'text') set(key, next);
    const caret = at.start + text.length;
    setTarget({ ...at, start: caret, end: caret });
    // After React has written the new value: the cursor goes right after the variable.
    requestAnimationFrame(() => {
      element.focus();
      element.setSelectionRange(caret, caret);
    });
  };
  // A field of the other channel's section is gone once the channel changes.
  const liveTarget = target?.element.isConnected ? target : null;

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
        <TextField
          label="Name"
          value={form.name}
          onChange={(e) => set('name', e.target.value)}
          error={errors.get('/name')}
          required
          maxLength={255}
          placeholder="e.g. Welcome email"
        />
        <FieldSet legend="Channel" error={errors.get('/channel')} className="radio-row">
          {CHANNELS.map((channel) => (
            <label className="radio" key={channel}>
              <input
                type="radio"
                name="channel"
                value={channel}
                checked={form.channel === channel}
                onChange={() => set('channel', channel)}
              />
              {CHANNEL_UI[channel].label}
              {CHANNEL_UI[channel].note && (
                <>
                  {' '}
                  <span className="muted">{CHANNEL_UI[channel].note}</span>
                </>
              )}
            </label>
          ))}
        </FieldSet>
      </section>

      <section className="card" aria-labelledby="trigger-title">
        <h2 id="trigger-title">Trigger</h2>
        <div className="grid-2">
          <SelectField
            label="Schedule type"
            value={form.schedule}
            onChange={(e) => set('schedule', e.target.value as CampaignForm['schedule'])}
            error={errors.get('/schedule')}
            hint="Only API Trigger campaigns accept POST /api/campaigns/trigger."
          >
            <option value="api">API Trigger</option>
            <option value="manual">Manual</option>
          </SelectField>
          <SelectField
            label="Trigger mode"
            value={form.mode}
            onChange={(e) => set('mode', e.target.value as CampaignForm['mode'])}
            error={errors.get('/mode')}
            hint={form.mode === 'delay' ? 'Waits, then sends; a new trigger restarts the wait.' : 'Sends as soon as the call is received.'}
          >
            <option value="immediate">Immediate</option>
            <option value="delay">Delay</option>
          </SelectField>
        </div>
        {form.mode === 'delay' && (
          <TextField
            label="Delay (seconds)"
            type="number"
            inputMode="numeric"
            min={1}
            max={2592000}
            step={1}
            value={form.delaySeconds}
            onChange={(e) => set('delaySeconds', e.target.value)}
            error={errors.get('/delaySeconds')}
            hint="1 second to 30 days (2,592,000)."
            className="field--narrow"
          />
        )}
        {form.mode !== 'delay' && errors.get('/delaySeconds') && <p className="field__error">{errors.get('/delaySeconds')}</p>}
        <CheckboxField
          label="Allow lead re-entry"
          hint="Off: each contact receives this campaign once; later triggers are Rejected."
          checked={form.reentry}
          onChange={(e) => set('reentry', e.target.checked)}
          error={errors.get('/reentry')}
        />
        {form.reentry && (
          <TextField
            label="Cooldown period (days)"
            type="number"
            inputMode="numeric"
            min={0}
            max={3650}
            step={1}
            value={form.cooldownDays}
            onChange={(e) => set('cooldownDays', e.target.value)}
            error={errors.get('/cooldownDays')}
            hint="Days before the same contact can receive it again (0 to 3650)."
            className="field--narrow"
          />
        )}
        {!form.reentry && errors.get('/cooldownDays') && <p className="field__error">{errors.get('/cooldownDays')}</p>}
      </section>

      {/* biome-ignore lint/a11y/noStaticElementInteractions: listens to its fields' events (where the cursor is), adds no interaction of its own */}
      <div className="message-editing" onFocus={track} onSelect={track} onKeyUp={track} onClick={track}>
        <MessageSection form={form} set={set} errors={errors} variablesHint={VARIABLES_HINT} />
        <section className="card" aria-label="Variables">
          <VariablePicker target={liveTarget} triggerPaths={triggerPaths} onInsert={insert} />
        </section>
      </div>

      {CHANNEL_UI[form.channel].webhooks && (
        <section className="card" aria-labelledby="webhooks-title">
          <h2 id="webhooks-title">Webhooks</h2>
          <p className="muted">
            Up to {MAX_WEBHOOKS} addresses receive the contact's data with every send, signed the Standard Webhooks way.
          </p>
          <FieldSet legend="Webhook URLs" className="visually-hidden-legend" error={errors.get('/webhooks')}>
            {form.webhooks.length === 0 && <p className="muted">No webhooks.</p>}
            {form.webhooks.map((url, i) => (
              <div key={i} className="row-field">
                <TextField
                  label={`Webhook ${i + 1}`}
                  type="url"
                  value={url}
                  placeholder="https://example.com/herald"
                  onChange={(e) =>
                    set(
                      'webhooks',
                      form.webhooks.map((w, j) => (j === i ? e.target.value : w)),
                    )
                  }
                  error={webhookError(i)}
                />
                <button
                  type="button"
                  className="button button--small button--quiet"
                  onClick={() =>
                    set(
                      'webhooks',
                      form.webhooks.filter((_, j) => j !== i),
                    )
                  }
                  aria-label={`Remove webhook ${i + 1}`}
                >
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
