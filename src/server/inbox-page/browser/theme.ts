// The page's theme: the system's (prefers-color-scheme), or light or dark as chosen with the switch in the bar. The
// choice is kept in this browser in a cookie of its own (svc_theme, read by nobody but the server), which the server
// reads to serve the page already in that theme: no flash of the other one before this script runs.
import { el } from './dom.js';

const YEAR = 365 * 24 * 3600;

export function initTheme() {
  const select = el<HTMLSelectElement>('theme');
  select.addEventListener('change', () => {
    const theme = select.value === 'light' || select.value === 'dark' ? select.value : null;
    const secure = location.protocol === 'https:' ? '; secure' : '';
    if (theme) document.documentElement.dataset.theme = theme;
    else delete document.documentElement.dataset.theme;
    // biome-ignore lint/suspicious/noDocumentCookie: one value of ours; cookieStore is not in every browser the page supports
    document.cookie = `svc_theme=${theme ?? ''}; path=/; max-age=${theme ? YEAR : 0}; samesite=strict${secure}`;
  });
}
