import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Me } from './types';

export interface Session {
  me: Me;
  /** Ends the session on the server and shows the login page. */
  logout: () => Promise<void>;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a logged-in page');
  return session;
}
