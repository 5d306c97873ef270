// Light and dark: follows the system unless the user picked one, which is
// remembered.
const KEY = 'weft.theme';

export function initTheme(button) {
  const apply = (t) => {
    if (t) document.documentElement.dataset.theme = t;
    else delete document.documentElement.dataset.theme;
    button.setAttribute('aria-pressed', t === 'dark' ? 'true' : 'false');
  };
  apply(localStorage.getItem(KEY));
  button.addEventListener('click', () => {
    const dark = document.documentElement.dataset.theme === 'dark' ||
      (!document.documentElement.dataset.theme && matchMedia('(prefers-color-scheme: dark)').matches);
    const next = dark ? 'light' : 'dark';
    localStorage.setItem(KEY, next);
    apply(next);
  });
}
