// The service clock as the inbox page knows it: the Clock panel (the time, real or manual, and the buttons that move
// a manual clock), and the times the page shows relative to that clock ("3 min ago"), kept current.
import type { ClockState, MovedClock } from '../../../contract/clock.js';
import { api, say } from './api.js';
import { el, exact, h } from './dom.js';
import { state } from './state.js';

const clockNow = el<HTMLTimeElement>('clock-now');
const clockMode = el('clock-mode');
const moves = el('clock-moves');

const serviceNow = () =>
  state.clock.mode === 'real' ? state.clock.now + (Date.now() - state.clock.at) : state.clock.now;

function relative(iso: string): string {
  const s = Math.round((serviceNow() - Date.parse(iso)) / 1000);
  if (s < 45) return 'just now';
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const hours = Math.round(m / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.round(hours / 24);
  return days < 30 ? `${days} d ago` : iso.slice(0, 10);
}

/** A time relative to the service clock, the exact one in its title; refreshTimes() keeps it current. */
export const time = (iso: string) =>
  h('time', { datetime: iso, title: exact(iso), 'data-relative': true }, relative(iso));

export const refreshTimes = () => {
  for (const t of document.querySelectorAll<HTMLTimeElement>('time[data-relative]'))
    t.textContent = relative(t.dateTime);
};

export function setClock(c: ClockState) {
  state.clock = { now: Date.parse(c.now), mode: c.mode, at: Date.now() };
  renderClock();
}

export function renderClock() {
  const iso = new Date(serviceNow()).toISOString();
  clockNow.dateTime = iso;
  clockNow.textContent = exact(iso);
  clockMode.textContent = state.clock.mode === 'manual' ? 'manual' : 'real time';
  moves.hidden = state.clock.mode !== 'manual';
}

export async function loadClock() {
  setClock(await api<ClockState>('GET', '/sandbox/clock'));
}

/** The buttons that move a manual clock. */
export function initClock() {
  moves.addEventListener('click', async (e) => {
    const button = (e.target as HTMLElement).closest<HTMLButtonElement>('button[data-advance]');
    if (!button) return;
    const buttons = [...moves.querySelectorAll('button')];
    for (const b of buttons) b.disabled = true;
    try {
      const moved = await api<MovedClock>('POST', '/sandbox/clock', {
        advance_seconds: Number(button.dataset.advance),
      });
      setClock({ now: moved.now, mode: 'manual' });
      say(`Clock moved to ${exact(moved.now)}; ${moved.ran} job${moved.ran === 1 ? '' : 's'} ran.`);
    } catch (err) {
      say((err as Error).message);
    } finally {
      // The button lost the focus when it was disabled: it takes it back, unless the person has put it elsewhere
      // meanwhile (a move that runs a slow webhook delivery is answered only once it is done).
      const away = document.activeElement !== document.body && document.activeElement !== button;
      for (const b of buttons) b.disabled = false;
      if (!away) button.focus();
    }
  });
}
