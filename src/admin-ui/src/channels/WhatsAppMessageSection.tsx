import { FieldSet, TextField } from '../components/Form';
import type { MessageSectionProps } from './types';

/** The WhatsApp message of the campaign form: the approved template, its language and body parameters. */
export function WhatsAppMessageSection({ form, set, errors }: MessageSectionProps) {
  return (
    <section className="card" aria-labelledby="message-title">
      <h2 id="message-title">WhatsApp template</h2>
      <p className="muted">An approved message template of your WhatsApp Business account.</p>
      <div className="grid-2">
        <TextField
          label="Template name"
          value={form.whatsappTemplate}
          onChange={(e) => set('whatsappTemplate', e.target.value)}
          error={errors.get('/whatsappTemplate')}
          placeholder="order_update"
          hint="Lowercase letters, digits and underscores."
        />
        <TextField
          label="Language"
          value={form.language}
          onChange={(e) => set('language', e.target.value)}
          error={errors.get('/language')}
          placeholder="en_US"
        />
      </div>
      <FieldSet
        legend="Body parameters"
        hint={
          <>
            One value per {'{{1}}'}, {'{{2}}'} … of the template, in order; Liquid works here too.
          </>
        }
        error={errors.get('/whatsappParams')}
      >
        {form.whatsappParams.map((param, i) => (
          <div key={i} className="row-field">
            <TextField
              label={`Parameter ${i + 1}`}
              value={param}
              onChange={(e) =>
                set(
                  'whatsappParams',
                  form.whatsappParams.map((p, j) => (j === i ? e.target.value : p)),
                )
              }
              error={errors.get(`/whatsappParams/${i}`)}
              data-template={`whatsappParams.${i}`}
            />
            <button
              type="button"
              className="button button--small button--quiet"
              onClick={() =>
                set(
                  'whatsappParams',
                  form.whatsappParams.filter((_, j) => j !== i),
                )
              }
              aria-label={`Remove parameter ${i + 1}`}
            >
              Remove
            </button>
          </div>
        ))}
        <button type="button" className="button button--small" onClick={() => set('whatsappParams', [...form.whatsappParams, ''])}>
          Add parameter
        </button>
      </FieldSet>
    </section>
  );
}
