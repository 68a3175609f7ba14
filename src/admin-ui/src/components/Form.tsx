import {
  type InputHTMLAttributes,
  type ReactNode,
  type SelectHTMLAttributes,
  type TextareaHTMLAttributes,
  useCallback,
  useEffect,
  useId,
  useMemo,
  useRef,
  useState,
} from 'react';
import { ApiError, errorMessage, type Problem } from '../api';

/**
 * Form errors from the API: `details[].path` names the member at fault, so each field shows
 * the message for its own path; whatever no field claims is listed in the form's alert.
 */
export interface FormErrors {
  /** The message for one member's path (`/name`, `/webhooks/0`). */
  get(path: string): string | undefined;
  /** The message for the path or for anything inside it (`/scopes` covers `/scopes/2`). */
  under(path: string): string | undefined;
  /** The error of the last failed submit (undefined after success). */
  error: unknown;
  /**
   * Keeps the error of a failed submit. `conflictPath`: a 409 (a duplicate) comes without
   * details, so it is shown next to the member that must be unique.
   */
  set(error: unknown, conflictPath?: string): void;
  clear(): void;
  /** Problems whose path is not in `shown`; `/a/*` in shown covers every `/a/...`. */
  unclaimed(shown: string[]): Problem[];
}

export function useFormErrors(): FormErrors {
  const [error, setError] = useState<unknown>(undefined);
  const byPath = useMemo(() => {
    const map = new Map<string, string>();
    if (error instanceof ApiError) for (const d of error.details) if (!map.has(d.path)) map.set(d.path, d.message);
    return map;
  }, [error]);
  const clear = useCallback(() => setError(undefined), []);
  return {
    error,
    get: (path) => byPath.get(path),
    under: (path) => byPath.get(path) ?? [...byPath].find(([p]) => p.startsWith(`${path}/`))?.[1],
    set: (err, conflictPath) => {
      if (conflictPath && err instanceof ApiError && err.status === 409 && err.details.length === 0) {
        setError(new ApiError(err.status, err.message, [{ path: conflictPath, message: err.message }]));
      } else setError(err);
    },
    clear,
    unclaimed: (shown) => {
      if (!(error instanceof ApiError)) return [];
      return error.details.filter((d) => !shown.some((s) => (s.endsWith('/*') ? d.path.startsWith(s.slice(0, -1)) : s === d.path)));
    },
  };
}

/**
 * The summary above the submit button, announced to screen readers. After a failed submit it
 * moves focus to the first invalid field so keyboard users land where the fix is.
 */
export function FormAlert({ errors, shown = [] }: { errors: FormErrors; shown?: string[] }) {
  const ref = useRef<HTMLDivElement>(null);
  const { error } = errors;
  useEffect(() => {
    if (!error) return;
    const form = ref.current?.closest('form');
    let invalid = form?.querySelector<HTMLElement>('[aria-invalid="true"]') ?? null;
    if (invalid?.matches('fieldset')) invalid = invalid.querySelector<HTMLElement>('input, select, textarea, button');
    (invalid ?? ref.current)?.focus();
  }, [error]);
  if (!error) return null;
  const rest = errors.unclaimed(shown);
  const hasFieldErrors = error instanceof ApiError && error.details.length > rest.length;
  return (
    <div className="alert alert--error" role="alert" tabIndex={-1} ref={ref}>
      <strong>{hasFieldErrors ? 'Please correct the highlighted fields.' : errorMessage(error)}</strong>
      {rest.length > 0 && (
        <ul>
          {rest.map((p) => (
            <li key={p.path + p.message}>{p.message}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

interface ControlProps {
  id: string;
  'aria-invalid'?: true;
  'aria-describedby'?: string;
}

/** A label, a control, an optional hint and the control's own error, wired for screen readers. */
export function Field({
  label,
  error,
  hint,
  className,
  children,
}: {
  label: ReactNode;
  error?: string;
  hint?: ReactNode;
  className?: string;
  children: (props: ControlProps) => ReactNode;
}) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field${error ? ' field--invalid' : ''}${className ? ` ${className}` : ''}`}>
      <label htmlFor={id}>{label}</label>
      {children({ id, 'aria-invalid': error ? true : undefined, 'aria-describedby': describedBy })}
      {hint && (
        <p className="field__hint" id={hintId}>
          {hint}
        </p>
      )}
      {error && (
        <p className="field__error" id={errorId}>
          {error}
        </p>
      )}
    </div>
  );
}

type Common = { label: ReactNode; error?: string; hint?: ReactNode; className?: string };

export function TextField({ label, error, hint, className, ...input }: Common & InputHTMLAttributes<HTMLInputElement>) {
  return (
    <Field label={label} error={error} hint={hint} className={className}>
      {(props) => <input type="text" {...input} {...props} />}
    </Field>
  );
}

export function TextAreaField({ label, error, hint, className, ...input }: Common & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  return (
    <Field label={label} error={error} hint={hint} className={className}>
      {(props) => <textarea {...input} {...props} />}
    </Field>
  );
}

export function SelectField({ label, error, hint, className, children, ...select }: Common & SelectHTMLAttributes<HTMLSelectElement>) {
  return (
    <Field label={label} error={error} hint={hint} className={className}>
      {(props) => (
        <select {...select} {...props}>
          {children}
        </select>
      )}
    </Field>
  );
}

/** A checkbox with its label on the right; the error sits under it. */
export function CheckboxField({ label, error, hint, className, ...input }: Common & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  const describedBy = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field field--check${error ? ' field--invalid' : ''}${className ? ` ${className}` : ''}`}>
      <div className="check">
        <input type="checkbox" id={id} aria-invalid={error ? true : undefined} aria-describedby={describedBy} {...input} />
        <label htmlFor={id}>{label}</label>
      </div>
      {hint && (
        <p className="field__hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p className="field__error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

/** A group of related controls (checkbox lists, radio groups) with its legend and error. */
export function FieldSet({
  legend,
  error,
  hint,
  children,
  className,
}: {
  legend: ReactNode;
  error?: string;
  hint?: ReactNode;
  children: ReactNode;
  className?: string;
}) {
  const id = useId();
  return (
    <fieldset
      className={`fieldset${error ? ' field--invalid' : ''}${className ? ` ${className}` : ''}`}
      aria-describedby={[hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined}
      aria-invalid={error ? true : undefined}
    >
      <legend>{legend}</legend>
      {hint && (
        <p className="field__hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {children}
      {error && (
        <p className="field__error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </fieldset>
  );
}
