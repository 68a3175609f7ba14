import type { ReactNode } from 'react';
import { ApiError, errorMessage } from '../api';

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <div className="loading" role="status">
      <span className="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

/** A failed load: the server's message, and a retry when it can help. */
export function ErrorState({
  error,
  onRetry,
  title,
  page = false,
}: {
  error: unknown;
  onRetry?: () => void;
  title?: string;
  page?: boolean;
}) {
  const notFound = error instanceof ApiError && error.status === 404;
  const Heading = page ? 'h1' : 'h2';
  return (
    <div className="state state--error" role="alert">
      <Heading tabIndex={page ? -1 : undefined}>{title ?? (notFound ? 'Not found' : 'Something went wrong')}</Heading>
      <p>{notFound ? `${errorMessage(error)}. It may have been deleted, or it belongs to another account.` : errorMessage(error)}</p>
      {onRetry && !notFound && (
        <button type="button" className="button" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function EmptyState({
  title,
  children,
  action,
  page = false,
}: {
  title: string;
  children?: ReactNode;
  action?: ReactNode;
  page?: boolean;
}) {
  const Heading = page ? 'h1' : 'h2';
  return (
    <div className="state">
      <Heading tabIndex={page ? -1 : undefined}>{title}</Heading>
      {children && <div className="state__body">{children}</div>}
      {action && <div className="state__action">{action}</div>}
    </div>
  );
}
