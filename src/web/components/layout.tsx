import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { useSession } from '../session';
import { nextTheme, setThemeChoice, themeChoice, type ThemeChoice } from '../theme';

const NAV = [
  { href: '/', label: 'Dashboard' },
  { href: '/devices', label: 'Devices' },
  { href: '/ports', label: 'Ports' },
  { href: '/risk-map', label: 'Risk map' },
  { href: '/map', label: 'Map' },
  { href: '/fix-first', label: 'Fix first' },
  { href: '/accepted', label: 'Accepted' },
  { href: '/policies', label: 'Policies' },
  { href: '/scans', label: 'Scans' },
  { href: '/schedules', label: 'Schedules' },
  { href: '/changes', label: 'Changes' },
  { href: '/agents', label: 'Agents' },
  { href: '/settings', label: 'Settings' },
];

const THEME_WORD: Record<ThemeChoice, string> = { system: 'System', light: 'Light', dark: 'Dark' };

/** A sun (light), a moon (dark), a half-filled circle (system: whatever the device uses). */
function ThemeIcon({ choice }: { choice: ThemeChoice }) {
  return (
    <svg class="icon" viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false">
      {choice === 'light' && (
        <>
          <circle cx="12" cy="12" r="4.5" />
          <path d="M12 2v2.5M12 19.5V22M2 12h2.5M19.5 12H22M4.9 4.9l1.8 1.8M17.3 17.3l1.8 1.8M4.9 19.1l1.8-1.8M17.3 6.7l1.8-1.8" />
        </>
      )}
      {choice === 'dark' && <path d="M20 14.5A8 8 0 0 1 9.5 4a8 8 0 1 0 10.5 10.5z" />}
      {choice === 'system' && (
        <>
          <circle cx="12" cy="12" r="8.5" />
          <path class="filled" d="M12 3.5a8.5 8.5 0 0 1 0 17z" />
        </>
      )}
    </svg>
  );
}

/**
 * The theme: one button that cycles system → light → dark. Its accessible name says the current
 * choice ("Theme: dark"), the icon and word show it, and the tooltip says what a press does.
 */
export function ThemeToggle() {
  const [choice, setChoice] = useState<ThemeChoice>(themeChoice());
  const next = nextTheme(choice);
  const change = () => {
    setThemeChoice(next);
    setChoice(next);
  };
  return (
    <button
      type="button"
      class="theme-toggle"
      onClick={change}
      aria-label={`Theme: ${choice}`}
      title={`Theme: ${THEME_WORD[choice].toLowerCase()}. Press for ${THEME_WORD[next].toLowerCase()}.`}
    >
      <ThemeIcon choice={choice} />
      <span class="theme-word" aria-hidden="true">
        {THEME_WORD[choice]}
      </span>
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
