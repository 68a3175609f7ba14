import type { ReactNode } from 'react';
import { useTitle } from '../hooks';

/** The page's h1 (focused after navigation by the layout), its description and actions. */
export function PageHeader({
  title,
  description,
  actions,
  meta,
  documentTitle,
}: {
  title: ReactNode;
  description?: ReactNode;
  actions?: ReactNode;
  meta?: ReactNode;
  documentTitle?: string;
}) {
  useTitle(documentTitle ?? (typeof title === 'string' ? title : ''));
  return (
    <header className="page-header">
      <div className="page-header__text">
        <h1 tabIndex={-1}>{title}</h1>
        {meta && <div className="page-header__meta">{meta}</div>}
        {description && <p className="page-header__description">{description}</p>}
      </div>
      {actions && <div className="page-header__actions">{actions}</div>}
    </header>
  );
}
