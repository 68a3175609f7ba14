import { Link } from 'react-router';
import { FieldSet, SelectField, TextField } from '../../components/Form';
import type { CustomField, Kpi } from '../../types';
import {
  COMPARISON_LABELS,
  type ComparisonForm,
  type CriteriaForm,
  type EventForm,
  emptyEvent,
  emptyGroup,
  type GroupForm,
  isOrdered,
  MAX_GROUPS,
  MAX_WITHIN_DAYS,
} from './criteria';

/** An error of the save or of the live count, by JSON path in the request body. */
type ErrorAt = (path: string, under?: boolean) => string | undefined;

interface Props {
  form: CriteriaForm;
  onChange: (form: CriteriaForm) => void;
  err: ErrorAt;
  fields: CustomField[];
  kpis: Kpi[];
  /** False while the definitions load (no "define one" hint yet). */
  loaded: boolean;
}

/** The criteria of a segment: groups, any of which may hold, each the AND of its conditions. */
export function CriteriaEditor({ form, onChange, err, fields, kpis, loaded }: Props) {
  const setGroup = (g: number, group: GroupForm) => onChange({ groups: form.groups.map((x, j) => (j === g ? group : x)) });
  const several = form.groups.length > 1;
  return (
    <section className="card stack" aria-labelledby="criteria-title">
      <h2 id="criteria-title">{several ? 'Contacts who match any group' : 'Contacts who match all of'}</h2>
      {form.groups.map((group, g) => (
        <div key={g} className="stack">
          {g > 0 && (
            <p className="segment-or" aria-hidden="true">
              or
            </p>
          )}
          <GroupEditor
            group={group}
            index={g}
            several={several}
            onChange={(next) => setGroup(g, next)}
            onRemove={() => onChange({ groups: form.groups.filter((_, j) => j !== g) })}
            err={(path, under) => err(`/criteria/groups/${g}${path}`, under) ?? (several ? undefined : err(`/criteria${path}`, under))}
            fields={fields}
            kpis={kpis}
            loaded={loaded}
          />
        </div>
      ))}
      {form.groups.length < MAX_GROUPS && (
        <div>
          <button type="button" className="button button--small" onClick={() => onChange({ groups: [...form.groups, emptyGroup()] })}>
            Add group (or)
          </button>
        </div>
      )}
    </section>
  );
}

interface GroupProps {
  group: GroupForm;
  index: number;
  several: boolean;
  onChange: (group: GroupForm) => void;
  onRemove: () => void;
  err: ErrorAt;
  fields: CustomField[];
  kpis: Kpi[];
  loaded: boolean;
}

function GroupEditor({ group, index, several, onChange, onRemove, err, fields, kpis, loaded }: GroupProps) {
  const set = <K extends keyof GroupForm>(key: K, value: GroupForm[K]) => onChange({ ...group, [key]: value });
  const change = <T,>(list: T[], i: number, patch: Partial<NoInfer<T>>): T[] => list.map((x, j) => (j === i ? { ...x, ...patch } : x));
  const body = (
    <>
      {group.events.map((event, i) => (
        <EventEditor
          key={i}
          event={event}
          index={i}
          onChange={(patch) => set('events', change(group.events, i, patch))}
          onRemove={() =>
            set(
              'events',
              group.events.filter((_, j) => j !== i),
            )
          }
          err={(path, under) => err(`/events/${i}${path}`, under)}
        />
      ))}
      <div>
        <button type="button" className="button button--small" onClick={() => set('events', [...group.events, emptyEvent()])}>
          Add event condition
        </button>
      </div>
      <TextField
        label="Tags"
        hint="Comma-separated; the contact has every one."
        value={group.tags}
        onChange={(e) => set('tags', e.target.value)}
        error={err('/tags', true)}
        placeholder="newsletter, black-friday"
      />
      <FieldSet legend="Field values" error={err('/fields')}>
        {group.fields.map((f, i) => {
          const type = fields.find((d) => d.name === f.name)?.type;
          return (
            <div key={i} className="row-field row-field--pair">
              <SelectField
                label={`Field ${i + 1}`}
                value={f.name}
                onChange={(e) => {
                  const ordered = isOrdered(fields.find((d) => d.name === e.target.value)?.type);
                  set('fields', change(group.fields, i, { name: e.target.value, ...(!ordered && { op: 'eq' }) }));
                }}
                error={err(`/fields/${i}/name`)}
              >
                <option value="">Choose a field…</option>
                {fields.map((d) => (
                  <option key={d.id} value={d.name}>
                    {d.name} ({d.type})
                  </option>
                ))}
                {f.name && !fields.some((d) => d.name === f.name) && <option value={f.name}>{f.name}</option>}
              </SelectField>
              <ComparisonInputs
                label={`Value ${i + 1}`}
                opLabel={`Comparison ${i + 1}`}
                toLabel={`To ${i + 1}`}
                ordered={isOrdered(type) || f.op !== 'eq'}
                comparison={f}
                onChange={(patch) => set('fields', change(group.fields, i, patch))}
                err={(path) => err(`/fields/${i}${path}`) ?? (path === '/value' ? err(`/fields/${i}`) : undefined)}
              />
              <RemoveButton
                label={`Remove field condition ${i + 1}`}
                onClick={() =>
                  set(
                    'fields',
                    group.fields.filter((_, j) => j !== i),
                  )
                }
              />
            </div>
          );
        })}
        {fields.length === 0 && loaded ? (
          <p className="muted small">
            No custom fields yet: <Link to="/fields">define one</Link> to select contacts by its value.
          </p>
        ) : (
          <div>
            <button
              type="button"
              className="button button--small"
              onClick={() => set('fields', [...group.fields, { name: fields[0]?.name ?? '', op: 'eq', value: '', to: '' }])}
            >
              Add field condition
            </button>
          </div>
        )}
      </FieldSet>
      <FieldSet legend="KPI totals" error={err('/kpis')}>
        {group.kpis.map((k, i) => (
          <div key={i} className="row-field row-field--pair">
            <SelectField
              label={`KPI ${i + 1}`}
              value={k.id}
              onChange={(e) => set('kpis', change(group.kpis, i, { id: e.target.value }))}
              error={err(`/kpis/${i}/id`)}
            >
              {kpis.map((d) => (
                <option key={d.id} value={d.id}>
                  {d.name} ({d.id})
                </option>
              ))}
              {k.id && !kpis.some((d) => d.id === k.id) && <option value={k.id}>{k.id}</option>}
            </SelectField>
            <ComparisonInputs
              label={`KPI value ${i + 1}`}
              opLabel={`KPI comparison ${i + 1}`}
              toLabel={`KPI to ${i + 1}`}
              ordered
              comparison={k}
              onChange={(patch) => set('kpis', change(group.kpis, i, patch))}
              err={(path) => err(`/kpis/${i}${path}`)}
            />
            <RemoveButton
              label={`Remove KPI condition ${i + 1}`}
              onClick={() =>
                set(
                  'kpis',
                  group.kpis.filter((_, j) => j !== i),
                )
              }
            />
          </div>
        ))}
        {kpis.length === 0 && loaded ? (
          <p className="muted small">
            No KPIs yet: <Link to="/kpis">define one</Link> to select contacts by its total.
          </p>
        ) : (
          <div>
            <button
              type="button"
              className="button button--small"
              onClick={() => set('kpis', [...group.kpis, { id: kpis[0]?.id ?? '', op: 'gte', value: '', to: '' }])}
            >
              Add KPI condition
            </button>
          </div>
        )}
      </FieldSet>
    </>
  );
  if (!several) return <div className="stack">{body}</div>;
  return (
    <FieldSet legend={`Group ${index + 1}`} hint="The contact matches all of these." className="segment-group">
      <div className="stack">
        {body}
        <div>
          <button type="button" className="button button--small button--danger-quiet" onClick={onRemove}>
            Remove group {index + 1}
          </button>
        </div>
      </div>
    </FieldSet>
  );
}

function EventEditor({
  event,
  index,
  onChange,
  onRemove,
  err,
}: {
  event: EventForm;
  index: number;
  onChange: (patch: Partial<EventForm>) => void;
  onRemove: () => void;
  err: ErrorAt;
}) {
  return (
    <FieldSet legend={`Event ${index + 1}`} error={err('')}>
      <div className="grid-2">
        <SelectField
          label="Did or did not"
          value={event.negated ? 'not' : 'did'}
          onChange={(e) => onChange({ negated: e.target.value === 'not' })}
        >
          <option value="did">Did it</option>
          <option value="not">Did not do it</option>
        </SelectField>
        <TextField
          label="Event type"
          hint="Exact text, case included (e.g. purchase)."
          value={event.type}
          onChange={(e) => onChange({ type: e.target.value })}
          error={err('/type')}
        />
        <TextField
          label="Within the last (days)"
          type="number"
          inputMode="numeric"
          min={1}
          max={MAX_WITHIN_DAYS}
          step={1}
          hint={`1 to ${MAX_WITHIN_DAYS} days.`}
          value={event.withinDays}
          onChange={(e) => onChange({ withinDays: e.target.value })}
          error={err('/withinDays')}
        />
        <TextField
          label="Metadata key (optional)"
          value={event.metadataKey}
          onChange={(e) => onChange({ metadataKey: e.target.value })}
          error={err('/metadata/key') ?? err('/metadata')}
          placeholder="plan"
        />
        <TextField
          label="Metadata value"
          hint="Compared as text."
          value={event.metadataValue}
          onChange={(e) => onChange({ metadataValue: e.target.value })}
          error={err('/metadata/value')}
          disabled={!event.metadataKey.trim()}
          placeholder="pro"
        />
      </div>
      <RemoveButton label={`Remove event condition ${index + 1}`} onClick={onRemove} />
    </FieldSet>
  );
}

/** The comparison select, the value, and the upper bound for `between`. */
function ComparisonInputs({
  label,
  opLabel,
  toLabel,
  ordered,
  comparison,
  onChange,
  err,
}: {
  label: string;
  opLabel: string;
  toLabel: string;
  ordered: boolean;
  comparison: ComparisonForm;
  onChange: (patch: Partial<ComparisonForm>) => void;
  err: ErrorAt;
}) {
  return (
    <>
      <SelectField
        className="segment-comparison"
        label={opLabel}
        value={comparison.op}
        onChange={(e) => onChange({ op: e.target.value as ComparisonForm['op'] })}
        error={err('/op')}
      >
        {(ordered ? (Object.keys(COMPARISON_LABELS) as ComparisonForm['op'][]) : (['eq'] as const)).map((op) => (
          <option key={op} value={op}>
            {COMPARISON_LABELS[op]}
          </option>
        ))}
      </SelectField>
      <TextField label={label} value={comparison.value} onChange={(e) => onChange({ value: e.target.value })} error={err('/value')} />
      {comparison.op === 'between' && (
        <TextField label={toLabel} value={comparison.to} onChange={(e) => onChange({ to: e.target.value })} error={err('/to')} />
      )}
    </>
  );
}

function RemoveButton({ label, onClick }: { label: string; onClick: () => void }) {
  return (
    <button type="button" className="button button--small button--quiet" onClick={onClick} aria-label={label}>
      Remove
    </button>
  );
}
