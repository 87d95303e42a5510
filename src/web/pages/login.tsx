import { useState } from 'preact/hooks';
import { api } from '../api';
import { ThemeToggle } from '../components/layout';
import { ErrorMessage } from '../components/ui';
import { useTitle } from '../hooks';
import type { Me } from '../types';

export function LoginPage({ onLoggedIn }: { onLoggedIn: (me: Me) => void }) {
  useTitle('Log in');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [remember, setRemember] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api('/api/auth/login', { method: 'POST', json: { username, password, remember } });
      onLoggedIn(await api<Me>('/api/auth/me'));
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <main class="centered">
      <form class="card auth-card" onSubmit={submit}>
        <h1>Log in to Netwarden</h1>
        <ErrorMessage error={error} />
        <label>
          Username
          <input name="username" autocomplete="username" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        <label class="checkbox">
          <input type="checkbox" checked={remember} onChange={(e) => setRemember(e.currentTarget.checked)} />
          Keep me logged in on this device
        </label>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Logging in…' : 'Log in'}
        </button>
        <p class="muted small">
          Forgot the password? On the server run <code>netwarden user reset-password &lt;username&gt;</code>.
        </p>
      </form>
      <ThemeToggle />
    </main>
  );
}
