// The search box's help and mistakes: the operators' popover (placed under its button; a click on an operator writes
// it into the box), and a search the server does not understand (a 400 naming the operators it knows), said under the
// box as a mistake of the search rather than a failure of the list.
import { el } from './dom.js';
import { q } from './state.js';

const problem = el('search-problem');
const ops = el('search-ops');

/** Says under the search box what the server found wrong with the search; null clears it. */
export function showSearchProblem(message: string | null) {
  problem.hidden = message === null;
  problem.textContent = message ?? '';
  if (message === null) {
    q.removeAttribute('aria-invalid');
    q.setAttribute('aria-describedby', 'search-help');
  } else {
    q.setAttribute('aria-invalid', 'true');
    q.setAttribute('aria-describedby', 'search-problem search-help');
  }
}

export function initSearchHelp() {
  const toggle = document.querySelector<HTMLElement>('[popovertarget="search-ops"]')!;
  // Under its button, kept inside the window.
  ops.addEventListener('beforetoggle', (e) => {
    if ((e as ToggleEvent).newState !== 'open') return;
    const at = toggle.getBoundingClientRect();
    const width = Math.min(544, window.innerWidth - 16);
    ops.style.top = `${Math.round(at.bottom + 6)}px`;
    ops.style.left = `${Math.round(Math.max(8, Math.min(at.left, window.innerWidth - width - 8)))}px`;
  });
  ops.addEventListener('click', (e) => {
    const op = (e.target as HTMLElement).closest<HTMLButtonElement>('button[data-op]')?.dataset.op;
    if (!op) return;
    q.value = q.value.trim() ? `${q.value.trimEnd()} ${op}` : op;
    ops.hidePopover();
    q.focus();
    q.setSelectionRange(q.value.length, q.value.length);
  });
}
