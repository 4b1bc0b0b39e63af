// The inbox page's keyboard shortcuts (listed at the foot of the page): j/k move among the rows, Delete deletes the
// focused or open message, / goes to the search, Escape closes the message or leaves the search. Keys typed into a
// field, a dialog or a popover are left to it.
import { deleteOne, focusedRowId, moveFocus } from './list.js';
import { q, state } from './state.js';
import { closeView } from './view.js';

export function initKeys() {
  document.addEventListener('keydown', (e) => {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
    const target = e.target as HTMLElement;
    if (target.closest('input, textarea, select, dialog, [popover], [contenteditable]')) {
      if (e.key === 'Escape' && target === q) q.blur();
      return;
    }
    if (e.key === 'j' || e.key === 'k') {
      e.preventDefault();
      moveFocus(e.key === 'j' ? 1 : -1);
    } else if (e.key === 'Delete') {
      const id = focusedRowId() ?? state.openId;
      if (id) {
        e.preventDefault();
        void deleteOne(id);
      }
    } else if (e.key === '/') {
      e.preventDefault();
      q.focus();
      q.select();
    } else if (e.key === 'Escape' && state.openId) {
      closeView();
    }
  });
}
