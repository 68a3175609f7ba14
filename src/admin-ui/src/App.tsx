import { type ReactNode, useCallback, useEffect, useRef, useState } from 'react';
import { BrowserRouter, Link, Navigate, NavLink, Route, Routes, useLocation } from 'react-router';
import { api, setCsrfToken, setSignedOutHandler } from './api';
import { Icon } from './components/Icon';
import { EmptyState, Loading } from './components/States';
import { AccountPage } from './pages/AccountPage';
import { CampaignPage } from './pages/CampaignPage';
import { CampaignsPage } from './pages/CampaignsPage';
import { ContactPage } from './pages/ContactPage';
import { ContactsPage } from './pages/ContactsPage';
import { ContactImportPage } from './pages/contacts/ContactImportPage';
import { FieldsPage } from './pages/FieldsPage';
import { KeysPage } from './pages/KeysPage';
import { KpisPage } from './pages/KpisPage';
import { LoginPage } from './pages/LoginPage';
import { NotFoundPage } from './pages/NotFoundPage';
import { OutboxMessagePage } from './pages/OutboxMessagePage';
import { OutboxPage } from './pages/OutboxPage';
import { ProfilePage } from './pages/ProfilePage';
import { SegmentPage } from './pages/SegmentPage';
import { SegmentsPage } from './pages/SegmentsPage';
import { UsersPage } from './pages/UsersPage';
import { SessionContext, useSession } from './session';
import type { Session } from './types';

type Gate = { state: 'loading' } | { state: 'signed-out'; expired?: boolean } | { state: 'signed-in'; session: Session };

export function App() {
  const [gate, setGate] = useState<Gate>({ state: 'loading' });

  const signedIn = useCallback((session: Session) => {
    setCsrfToken(session.csrfToken);
    setGate({ state: 'signed-in', session });
  }, []);

  useEffect(() => {
    setSignedOutHandler(() => {
      setCsrfToken(null);
      setGate({ state: 'signed-out', expired: true });
    });
    api.get<Session>('/session').then(signedIn, () => setGate({ state: 'signed-out' }));
    return () => setSignedOutHandler(null);
  }, [signedIn]);

  const signOut = useCallback(async () => {
    try {
      await api.post('/logout');
    } finally {
      setCsrfToken(null);
      setGate({ state: 'signed-out' });
    }
  }, []);

  if (gate.state === 'loading') {
    return (
      <div className="boot">
        <Loading />
      </div>
    );
  }
  if (gate.state === 'signed-out') return <LoginPage onSignedIn={signedIn} expired={gate.expired} />;
  return (
    <SessionContext.Provider value={{ session: gate.session, signOut }}>
      <BrowserRouter basename="/admin">
        <Layout>
          <Routes>
            <Route path="/" element={<Navigate to="/campaigns" replace />} />
            <Route path="/campaigns" element={<CampaignsPage />} />
            <Route path="/campaigns/new" element={<CampaignPage />} />
            <Route path="/campaigns/:id" element={<CampaignPage />} />
            <Route path="/contacts" element={<ContactsPage />} />
            <Route path="/contacts/import" element={<ContactImportPage />} />
            <Route path="/contacts/:id" element={<ContactPage />} />
            <Route path="/segments" element={<SegmentsPage />} />
            <Route path="/segments/new" element={<SegmentPage />} />
            <Route path="/segments/:id" element={<SegmentPage />} />
            <Route path="/outbox" element={<OutboxPage />} />
            <Route path="/outbox/:id" element={<OutboxMessagePage />} />
            <Route path="/fields" element={<FieldsPage />} />
            <Route path="/kpis" element={<KpisPage />} />
            <Route
              path="/keys"
              element={
                <AdminOnly>
                  <KeysPage />
                </AdminOnly>
              }
            />
            <Route
              path="/users"
              element={
                <AdminOnly>
                  <UsersPage />
                </AdminOnly>
              }
            />
            <Route path="/account" element={<AccountPage />} />
            <Route path="/profile" element={<ProfilePage />} />
            <Route path="*" element={<NotFoundPage />} />
          </Routes>
        </Layout>
      </BrowserRouter>
    </SessionContext.Provider>
  );
}

/** Members never see the admin-only pages (the API refuses them too). */
function AdminOnly({ children }: { children: ReactNode }) {
  const { session } = useSession();
  if (session.user.role === 'admin') return <>{children}</>;
  return (
    <EmptyState page title="Administrators only">
      <p>Ask an administrator of {session.account.name} for access to this page.</p>
    </EmptyState>
  );
}

const NAV: { to: string; label: string; icon: string; admin?: boolean; group: string }[] = [
  { to: '/campaigns', label: 'Campaigns', icon: 'campaigns', group: 'Messaging' },
  { to: '/outbox', label: 'Outbox', icon: 'outbox', group: 'Messaging' },
  { to: '/contacts', label: 'Contacts', icon: 'contacts', group: 'Audience' },
  { to: '/segments', label: 'Segments', icon: 'segments', group: 'Audience' },
  { to: '/fields', label: 'Custom fields', icon: 'fields', group: 'Settings' },
  { to: '/kpis', label: 'KPIs', icon: 'kpis', group: 'Settings' },
  { to: '/keys', label: 'API keys', icon: 'keys', admin: true, group: 'Settings' },
  { to: '/users', label: 'Users', icon: 'users', admin: true, group: 'Settings' },
  { to: '/account', label: 'Account', icon: 'account', group: 'Settings' },
];

function Layout({ children }: { children: ReactNode }) {
  const { session, signOut } = useSession();
  const location = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  const mainRef = useRef<HTMLElement>(null);
  const firstRender = useRef(true);

  // After a client-side navigation, close the narrow-screen menu and move focus to the new
  // page's heading so keyboard and screen-reader users start at the top of the content.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs on every navigation (the pathname), which the body need not read
  useEffect(() => {
    setMenuOpen(false);
    if (firstRender.current) {
      firstRender.current = false;
      return;
    }
    const frame = requestAnimationFrame(() => {
      const heading = mainRef.current?.querySelector<HTMLElement>('h1');
      (heading ?? mainRef.current)?.focus({ preventScroll: false });
    });
    return () => cancelAnimationFrame(frame);
  }, [location.pathname]);

  useEffect(() => {
    if (!menuOpen) return;
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && setMenuOpen(false);
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [menuOpen]);

  const isAdmin = session.user.role === 'admin';
  const items = NAV.filter((n) => !n.admin || isAdmin);
  const groups = [...new Set(items.map((n) => n.group))];

  return (
    <div className={`shell${menuOpen ? ' shell--menu-open' : ''}`}>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      {/* The brand and the main navigation: the page's banner (a sidebar on wide screens, a top bar on narrow ones). */}
      <header className="sidebar">
        <div className="sidebar__top">
          <Link className="brand" to="/campaigns">
            <span className="brand__mark" aria-hidden="true">
              H
            </span>
            <span className="brand__name">Herald</span>
          </Link>
          <button
            type="button"
            className="menu-button"
            aria-expanded={menuOpen}
            aria-controls="main-nav"
            onClick={() => setMenuOpen((o) => !o)}
          >
            <Icon name={menuOpen ? 'close' : 'menu'} />
            <span>Menu</span>
          </button>
        </div>
        <nav id="main-nav" className="nav" aria-label="Main">
          {groups.map((group) => (
            <div key={group} className="nav__group">
              <p className="nav__heading">{group}</p>
              <ul>
                {items
                  .filter((n) => n.group === group)
                  .map((n) => (
                    <li key={n.to}>
                      <NavLink to={n.to} className="nav__link">
                        <Icon name={n.icon} />
                        {n.label}
                      </NavLink>
                    </li>
                  ))}
              </ul>
            </div>
          ))}
          <div className="nav__footer">
            <p className="nav__account">
              <span className="nav__account-name">{session.account.name}</span>
              <span className="nav__user">
                {session.user.email} · {session.user.role}
              </span>
            </p>
            <NavLink to="/profile" className="nav__link">
              <Icon name="account" />
              Your profile
            </NavLink>
            <button type="button" className="nav__link nav__signout" onClick={() => void signOut()}>
              <Icon name="logout" />
              Sign out
            </button>
          </div>
        </nav>
      </header>
      <main id="main" className="main" ref={mainRef} tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}
