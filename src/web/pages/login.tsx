import { useState } from 'preact/hooks';
import { answer, api } from '../api';
import { ThemeToggle } from '../components/layout';
import { PasswordInput } from '../components/form-parts';
import { ErrorMessage } from '../components/ui';
import { submitRunning, useAction, useTitle } from '../hooks';
import type { Me } from '../types';

export function LoginPage({ onLoggedIn }: { onLoggedIn: (me: Me) => void }) {
  useTitle('Log in');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [remember, setRemember] = useState(false);
  const login = useAction(async () => {
    await api.POST('/api/auth/login', { body: { username, password, remember } });
    onLoggedIn(await answer(api.GET('/api/auth/me')));
  });
  const submit = submitRunning(login);

  return (
    <main class="centered">
      <form class="card auth-card" onSubmit={submit}>
        <h1>Log in to Netwarden</h1>
        <ErrorMessage error={login.error} />
        <label>
          Username
          <input name="username" autocomplete="username" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
        </label>
        <label>
          Password
          <PasswordInput name="password" autocomplete="current-password" value={password} onInput={setPassword} />
        </label>
        <label class="checkbox">
          <input type="checkbox" checked={remember} onChange={(e) => setRemember(e.currentTarget.checked)} />
          Keep me logged in on this device
        </label>
        <button type="submit" class="primary" disabled={login.busy}>
          {login.busy ? 'Logging in…' : 'Log in'}
        </button>
        <p class="muted small">
          Forgot the password? On the server run <code>netwarden user reset-password &lt;username&gt;</code>.
        </p>
      </form>
      <ThemeToggle />
    </main>
  );
}
