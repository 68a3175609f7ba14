import { useId, useState } from 'react';
import { useApi } from '../../hooks';
import type { CustomField, Kpi } from '../../types';
import { liquidKey } from './sample-data';

/** The template field that had the focus last, and where its cursor (or selection) was. */
export interface TemplateTarget {
  element: HTMLInputElement | HTMLTextAreaElement;
  /** The field's name for people ("Subject"), from its label. */
  label: string;
  start: number;
  end: number;
}

interface Group {
  label: string;
  variables: string[];
  /** Shown, disabled, when the group has no variables. */
  empty?: string;
}

const CONTACT = ['contact.name', 'contact.email', 'contact.phone', 'contact.id', 'contact.tags', 'contact.emails', 'contact.phones'];
const OTHERS = ['campaign.name', 'campaign.id', 'unsubscribe_url'];

/**
 * Inserts a Liquid variable at the cursor of the template field used last (issue 13,
 * Authoring): the contact's built-ins, the account's custom fields and KPIs, the sample
 * trigger data's keys and the campaign's own. A labelled select and a button, so it works
 * from the keyboard alone; the field gets the focus back with the cursor after the variable.
 */
export function VariablePicker({
  target,
  triggerPaths,
  onInsert,
}: {
  target: TemplateTarget | null;
  triggerPaths: string[];
  onInsert: (target: TemplateTarget, text: string) => void;
}) {
  const id = useId();
  const fields = useApi<{ items: CustomField[] }>('/fields');
  const kpis = useApi<{ items: Kpi[] }>('/kpis');
  const [chosen, setChosen] = useState('contact.name');

  const groups: Group[] = [
    { label: 'Contact', variables: CONTACT },
    {
      label: 'Custom fields',
      variables: (fields.data?.items ?? []).map((f) => `contact.fields${liquidKey(f.name)}`),
      empty: 'No custom fields defined',
    },
    { label: 'KPIs', variables: (kpis.data?.items ?? []).map((k) => `contact.kpis${liquidKey(k.id)}`), empty: 'No KPIs defined' },
    { label: 'Trigger data', variables: triggerPaths, empty: 'Add sample trigger data (JSON) to list its keys' },
    { label: 'Campaign and links', variables: OTHERS },
  ];

  return (
    <div className="variable-picker" role="group" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`} className="variable-picker__title">
        Insert a variable
      </h3>
      <div className="variable-picker__row">
        <div className="field">
          <label htmlFor={`${id}-variable`}>Variable</label>
          <select id={`${id}-variable`} value={chosen} onChange={(e) => setChosen(e.target.value)} aria-describedby={`${id}-where`}>
            {groups.map((group) => (
              <optgroup key={group.label} label={group.label}>
                {group.variables.length === 0 && group.empty ? (
                  <option disabled value="">
                    {group.empty}
                  </option>
                ) : (
                  group.variables.map((v) => (
                    <option key={v} value={v}>
                      {v}
                    </option>
                  ))
                )}
              </optgroup>
            ))}
          </select>
        </div>
        <button
          type="button"
          className="button button--small"
          disabled={!target || !chosen}
          onClick={() => target && chosen && onInsert(target, `{{ ${chosen} }}`)}
        >
          Insert
        </button>
      </div>
      <p className="field__hint" id={`${id}-where`} aria-live="polite">
        {target ? (
          <>
            Inserts into <strong>{target.label}</strong> at the cursor.
          </>
        ) : (
          'Place the cursor in the subject, a body or a parameter first.'
        )}
      </p>
    </div>
  );
}
