// The Release dialog of an open message: sends it, exactly as caught, through the server's relay
// (`svc serve --relay-url`) to the addresses typed, which start as the message's own recipients. It shows the relay
// (its URL without the password) and its allow-list; a refusal (the allow-list, the relay's reply) is said in the
// dialog, which stays open to correct the addresses. Without a relay the dialog says which flag gives one.
import type { CaughtMessage, RelayInfo, ReleaseResult } from '../../../contract/inbox.js';
import { api, messagePath, say } from './api.js';
import { h } from './dom.js';

let relay: Promise<RelayInfo> | undefined;
/** The relay as the server has it: read once (it is fixed when the server starts). */
const relayInfo = () =>
  (relay ??= api<RelayInfo>('GET', '/sandbox/relay').catch((err: unknown) => {
    relay = undefined;
    throw err;
  }));

/** Addresses as typed: separated by commas, semicolons, spaces or lines. */
const addresses = (text: string) => text.split(/[\s,;]+/).filter(Boolean);

/** The Release button of a message's head; `released` is called once the relay took it (its timeline changed). */
export function releaseButton(m: CaughtMessage, released: () => void): HTMLButtonElement {
  const button = h('button', { type: 'button', id: 'release', 'aria-haspopup': 'dialog' }, 'Release…');
  button.addEventListener('click', () => {
    relayInfo().then(
      (info) => openDialog(m, info, button, released),
      (err: Error) => say(err.message),
    );
  });
  return button;
}

function openDialog(m: CaughtMessage, info: RelayInfo, opener: HTMLElement, released: () => void): void {
  document.getElementById('release-dialog')?.remove();
  const to = h('input', {
    type: 'text',
    id: 'release-to',
    name: 'to',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
    'aria-describedby': 'release-allow',
    value: m.envelope.rcpt_to.join(', '),
  });
  const error = h('p', { class: 'release-error', id: 'release-error', role: 'alert' });
  const submit = h('button', { type: 'submit', class: 'primary', disabled: !info.configured }, 'Release');
  const cancel = h('button', { type: 'button', value: 'cancel' }, 'Cancel');
  const form = h(
    'form',
    { method: 'dialog', novalidate: true },
    h('h2', { id: 'release-h' }, 'Release this message'),
    info.configured
      ? h(
          'p',
          { id: 'release-p' },
          'Sends it exactly as caught — its bytes untouched, its DKIM signature intact — through ',
          h('code', { class: 'url' }, info.relay ?? ''),
          info.from ? ` from ${info.from}` : '',
          '.',
        )
      : h(
          'p',
          { id: 'release-p' },
          'This server has no relay. Start it with ',
          h('code', {}, 'svc serve --relay-url smtp://user:pass@host:port'),
          ' (or SVC_RELAY_URL) to release mail.',
        ),
    h('label', { for: 'release-to' }, 'To'),
    to,
    h(
      'p',
      { class: 'allow', id: 'release-allow' },
      info.allow.length
        ? h('span', {}, 'Allowed recipients: ', ...joined(info.allow.map((p) => h('code', {}, p))))
        : 'Any recipient is allowed (no --relay-allow).',
    ),
    error,
    h('div', { class: 'buttons' }, cancel, submit),
  );
  const dialog = h(
    'dialog',
    { id: 'release-dialog', class: 'release', 'aria-labelledby': 'release-h', 'aria-describedby': 'release-p' },
    form,
  );
  const close = () => {
    dialog.close();
    dialog.remove();
    opener.focus();
  };
  cancel.addEventListener('click', close);
  dialog.addEventListener('cancel', (e) => {
    e.preventDefault();
    close();
  });
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const list = addresses(to.value);
    if (!list.length) {
      error.textContent = 'Give at least one address.';
      to.focus();
      return;
    }
    submit.disabled = true;
    error.textContent = '';
    try {
      const r = await api<ReleaseResult>('POST', `${messagePath(m.id)}/release`, { to: list });
      close();
      say(`Released to ${r.to.join(', ')} through ${r.relay}: ${r.response}`);
      released();
    } catch (err) {
      error.textContent = (err as Error).message;
      to.setAttribute('aria-invalid', 'true');
      to.focus();
    } finally {
      submit.disabled = !info.configured;
    }
  });
  document.body.append(dialog);
  dialog.showModal();
  to.focus();
  to.select();
}

/** Nodes with ", " between them. */
function joined(nodes: Node[]): (Node | string)[] {
  return nodes.flatMap((n, i) => (i ? [', ', n] : [n]));
}
