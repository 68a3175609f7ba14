import { createContext, useContext } from 'react';
import type { Session } from './types';

export interface SessionState {
  session: Session;
  signOut(): Promise<void>;
}

export const SessionContext = createContext<SessionState | null>(null);

/** The signed-in user and account; only used below the sign-in gate, so it is always there. */
export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession outside the signed-in layout');
  return state;
}

export function useIsAdmin(): boolean {
  return useSession().session.user.role === 'admin';
}
