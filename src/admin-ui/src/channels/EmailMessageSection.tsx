import { TextAreaField, TextField } from '../components/Form';
import type { MessageSectionProps } from './types';

/** The email message of the campaign form: sender, subject, HTML and text bodies. */
export function EmailMessageSection({ form, set, errors, variablesHint }: MessageSectionProps) {
  return (
    <section className="card" aria-labelledby="message-title">
      <h2 id="message-title">Email message</h2>
      <div className="grid-2">
        <TextField
          label="From"
          value={form.from}
          onChange={(e) => set('from', e.target.value)}
          error={errors.get('/from')}
          placeholder="Acme <news@acme.com>"
          autoComplete="off"
        />
        <TextField
          label="Subject"
          value={form.subject}
          onChange={(e) => set('subject', e.target.value)}
          data-template="subject"
          error={errors.get('/subject')}
          placeholder="Welcome, {{ contact.name }}"
        />
      </div>
      <TextAreaField
        label="HTML body"
        className="field--code"
        rows={12}
        spellCheck={false}
        value={form.html}
        onChange={(e) => set('html', e.target.value)}
        data-template="html"
        error={errors.get('/html')}
        hint={variablesHint}
      />
      <TextAreaField
        label="Plain-text body"
        className="field--code"
        rows={5}
        value={form.text}
        onChange={(e) => set('text', e.target.value)}
        data-template="text"
        error={errors.get('/text')}
        hint="Optional: made from the HTML when empty."
      />
    </section>
  );
}
