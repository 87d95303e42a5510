import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { useSession } from '../session';
import { nextTheme, setThemeChoice, themeChoice, type ThemeChoice } from '../theme';

const NAV = [
  { href: '/', label: 'Dashboard' },
  { href: '/scan', label: 'Scan' },
  { href: '/devices', label: 'Devices' },
  { href: '/scans', label: 'Scan history' },
  { href: '/changes', label: 'Changes' },
  { href: '/settings', label: 'Settings' },
];

const THEME_LABEL: Record<ThemeChoice, string> = { system: 'Theme: system', light: 'Theme: light', dark: 'Theme: dark' };

export function ThemeToggle() {
  const [choice, setChoice] = useState<ThemeChoice>(themeChoice());
  const change = () => {
    const next = nextTheme(choice);
    setThemeChoice(next);
    setChoice(next);
  };
  return (
    <button type="button" class="theme-toggle" onClick={change} title="Switch between system, light and dark themes">
      {THEME_LABEL[choice]}
    </button>
  );
}

function isCurrent(href: string, path: string): boolean {
  return href === '/' ? path === '/' : path === href || path.startsWith(`${href}/`);
}

export function Layout({ children }: { children: ComponentChildren }) {
  const { path, route } = useLocation();
  const { me, logout } = useSession();
  // After logging out on purpose, the next login starts on the dashboard; after a session
  // expires (a 401 anywhere), logging in again returns to the page that was open.
  const logOut = () => {
    route('/', true);
    void logout();
  };
  return (
    <div class="shell">
      <header class="topbar">
        <a href="/" class="brand">
          <img src="/favicon.svg" alt="" width={24} height={24} />
          Netwarden
        </a>
        <nav class="nav" aria-label="Main">
          {NAV.map((item) => (
            <a key={item.href} href={item.href} aria-current={isCurrent(item.href, path) ? 'page' : undefined}>
              {item.label}
            </a>
          ))}
        </nav>
        <div class="user">
          <ThemeToggle />
          <span class="username" title="Signed in">
            {me.username}
          </span>
          <button type="button" onClick={logOut}>
            Log out
          </button>
        </div>
      </header>
      <main class="content" id="main">
        {children}
      </main>
    </div>
  );
}
