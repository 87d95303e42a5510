import { LocationProvider, Route, Router } from 'preact-iso';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, SESSION_ENDED, answer, api } from './api';
import { Layout } from './components/layout';
import { ErrorMessage, Loading } from './components/ui';
import { AgentsPage } from './pages/agents';
import { ChangesPage } from './pages/changes';
import { ComparePage } from './pages/compare';
import { DashboardPage } from './pages/dashboard';
import { DeviceDetailPage } from './pages/device-detail';
import { DevicesPage } from './pages/devices';
import { LoginPage } from './pages/login';
import { MapPage } from './pages/map';
import { NotFoundPage } from './pages/not-found';
import { PoliciesPage } from './pages/policies';
import { PortsPage } from './pages/ports';
import { AcceptedPage, FixFirstPage } from './pages/risk';
import { RiskMapPage } from './pages/risk-map';
import { ScanRedirect, ScansPage } from './pages/scans';
import { SchedulesPage } from './pages/schedules';
import { SettingsPage } from './pages/settings';
import { SetupPage, resumeStep } from './pages/setup';
import { SessionContext, type Session } from './session';
import type { Me } from './types';

type AuthState = { kind: 'loading' } | { kind: 'failed'; error: unknown } | { kind: 'setup' } | { kind: 'login' } | { kind: 'in'; me: Me };

/** Decides between first-run set-up, login and the app, from the public status and the session. */
async function loadAuthState(): Promise<AuthState> {
  const status = await answer(api.GET('/api/auth/status'));
  if (status.setup_required) return { kind: 'setup' };
  try {
    return { kind: 'in', me: await answer(api.GET('/api/auth/me')) };
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return { kind: 'login' };
    throw error;
  }
}

export function App() {
  const [state, setState] = useState<AuthState>({ kind: 'loading' });

  const refresh = useCallback(() => {
    loadAuthState().then(setState, (error: unknown) => setState({ kind: 'failed', error }));
  }, []);

  useEffect(() => {
    refresh();
    const ended = () => setState((s) => (s.kind === 'in' ? { kind: 'login' } : s));
    window.addEventListener(SESSION_ENDED, ended);
    return () => window.removeEventListener(SESSION_ENDED, ended);
  }, [refresh]);

  const logout = useCallback(async () => {
    try {
      await api.POST('/api/auth/logout');
    } finally {
      setState({ kind: 'login' });
    }
  }, []);

  if (state.kind === 'loading') return <Loading label="Connecting to Netwarden…" />;
  if (state.kind === 'failed') {
    return (
      <main class="centered">
        <h1>Netwarden</h1>
        <ErrorMessage error={state.error} onRetry={refresh} />
      </main>
    );
  }
  return (
    <LocationProvider>
      {state.kind === 'setup' && <SetupPage onFinished={(me) => setState({ kind: 'in', me })} />}
      {state.kind === 'login' && <LoginPage onLoggedIn={(me) => setState({ kind: 'in', me })} />}
      {state.kind === 'in' && <SignedIn me={state.me} logout={logout} onFinished={(me) => setState({ kind: 'in', me })} />}
    </LocationProvider>
  );
}

/** The app, or the set-up wizard where this browser left it after creating the account (a reload resumes it). */
function SignedIn({ me, logout, onFinished }: { me: Me; logout: () => Promise<void>; onFinished: (me: Me) => void }) {
  const step = resumeStep(me);
  if (step) return <SetupPage resume={{ me, step }} onFinished={onFinished} />;
  return <LoggedIn session={{ me, logout }} />;
}

function LoggedIn({ session }: { session: Session }) {
  return (
    <SessionContext.Provider value={session}>
      <Layout>
        <Router>
          <Route path="/" component={DashboardPage} />
          <Route path="/scan" component={ScanRedirect} />
          <Route path="/devices" component={DevicesPage} />
          <Route path="/devices/:id" component={DeviceDetailPage} />
          <Route path="/ports" component={PortsPage} />
          <Route path="/risk-map" component={RiskMapPage} />
          <Route path="/map" component={MapPage} />
          <Route path="/fix-first" component={FixFirstPage} />
          <Route path="/accepted" component={AcceptedPage} />
          <Route path="/policies" component={PoliciesPage} />
          <Route path="/scans" component={ScansPage} />
          <Route path="/schedules" component={SchedulesPage} />
          <Route path="/changes" component={ChangesPage} />
          <Route path="/compare" component={ComparePage} />
          <Route path="/agents" component={AgentsPage} />
          <Route path="/settings" component={SettingsPage} />
          <Route path="/settings/:section" component={SettingsPage} />
          <Route default component={NotFoundPage} />
        </Router>
      </Layout>
    </SessionContext.Provider>
  );
}
