// The window's title counts unread mail, as a mail client's does: "(3) svc inbox". The count is a search for
// is:unread over the whole inbox (whatever the list shows), read again when mail arrives, is marked read or unread,
// or is deleted; from 99 on it shows as "99+".
import type { CaughtMessagePage } from '../../../contract/inbox.js';
import { api } from './api.js';

const TITLE = 'svc inbox';
const COUNTED = 99;

let serial = 0;
async function loadUnread() {
  const mine = ++serial;
  let page: CaughtMessagePage;
  try {
    page = await api('GET', `/sandbox/messages?q=${encodeURIComponent('is:unread')}&limit=${COUNTED}`);
  } catch {
    return;
  }
  if (mine !== serial) return; // a later count has begun
  const n = page.data.length;
  document.title = n ? `(${page.has_more ? `${COUNTED}+` : n}) ${TITLE}` : TITLE;
}

let timer: ReturnType<typeof setTimeout> | undefined;
/** One count for a burst of news. */
export function countUnreadSoon() {
  clearTimeout(timer);
  timer = setTimeout(() => void loadUnread(), 100);
}
