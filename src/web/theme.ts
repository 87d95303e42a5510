// The light/dark choice: "system" (the default) follows the operating system. public/theme.js
// applies it before the first paint; this module changes it.

export type ThemeChoice = 'system' | 'light' | 'dark';

const KEY = 'netwarden-theme';

export function themeChoice(): ThemeChoice {
  const value = document.documentElement.getAttribute('data-theme-choice');
  return value === 'light' || value === 'dark' ? value : 'system';
}

export function setThemeChoice(choice: ThemeChoice): void {
  try {
    if (choice === 'system') localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, choice);
  } catch {
    // Storage disabled: the choice lasts for this page only.
    document.documentElement.setAttribute('data-theme-choice', choice);
  }
  (window as unknown as { netwardenApplyTheme?: () => void }).netwardenApplyTheme?.();
}

/** system → light → dark → system. */
export function nextTheme(choice: ThemeChoice): ThemeChoice {
  return choice === 'system' ? 'light' : choice === 'light' ? 'dark' : 'system';
}
