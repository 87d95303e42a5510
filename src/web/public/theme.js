// Sets data-theme on <html> from the saved choice ("light", "dark" or "system", the default)
// before the page paints, and follows the system setting while the choice is "system".
(function () {
  var KEY = 'netwarden-theme';
  var media = window.matchMedia('(prefers-color-scheme: dark)');
  function apply() {
    var choice = 'system';
    try {
      choice = localStorage.getItem(KEY) || 'system';
    } catch (_error) {
      // Storage is unavailable (blocked cookies, some private modes): follow the system setting.
    }
    var theme = choice === 'light' || choice === 'dark' ? choice : media.matches ? 'dark' : 'light';
    document.documentElement.setAttribute('data-theme', theme);
    document.documentElement.setAttribute('data-theme-choice', choice);
  }
  apply();
  media.addEventListener('change', apply);
  window.addEventListener('storage', apply);
  window.netwardenApplyTheme = apply;
})();
