// The inbox page's script, run by the browser: pages.ts serves this function's source as /inbox.js, so it is
// type-checked with the server yet needs no bundler. It must stay self-contained: no imports, nothing from this
// module's scope. Everything it shows comes from the sandbox routes (the cookie authenticates it) and the live
// stream; it writes the page with DOM calls and text nodes only, never HTML from a message.
export function inboxClient(): void {
  type Workspace = { id: string; name: string };
  interface Summary {
    id: string;
    message_id: string | null;
    from: string | null;
    to: string[];
    cc: string[];
    subject: string | null;
    received_at: string;
    size: number;
    status: string | null;
    workspace: Workspace | null;
    preview: string | null;
    has_attachments: boolean;
    read: boolean;
  }
  interface Attachment {
    filename: string | null;
    content_type: string;
    size: number;
    content_id: string | null;
  }
  interface Attempt {
    delivery_id: number;
    endpoint_id: string;
    event_id: string;
    event_type: string;
    attempt: number;
    at: string;
    status_code: number | null;
    error: string | null;
    duration_ms: number;
    ok: boolean;
  }
  interface Delivery {
    delivery_id: number;
    endpoint_id: string;
    url: string | null;
    attempts: Attempt[];
  }
  interface TimelineEvent {
    id: string;
    type: string;
    occurred_at: string;
    detail: Record<string, unknown>;
    deliveries: Delivery[];
  }
  interface Message extends Summary {
    envelope: { mail_from: string | null; rcpt_to: string[] };
    headers: { name: string; value: string }[];
    text: string | null;
    html: string | null;
    attachments: Attachment[];
    dkim: 'pass' | 'fail' | 'none';
    dkim_domain: string | null;
    events: TimelineEvent[] | null;
  }
  interface Clock {
    now: string;
    mode: 'real' | 'manual';
  }
  /** An endpoint as the panel shows it: its secret is left out of everything the page keeps. */
  interface Endpoint {
    id: string;
    workspace_id: string;
    url: string;
    events: string[] | null;
    status: 'active' | 'disabled_by_failures';
    disabled_at: string | null;
    recent_attempts: Attempt[];
  }
  type Tab = 'html' | 'text' | 'headers' | 'raw';

  const PAGE_SIZE = 50;
  /** Attempts shown for each endpoint in the panel, newest first. */
  const PANEL_ATTEMPTS = 5;
  const RAW_SHOWN = 2 * 1024 * 1024;
  const el = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
  const rowsEl = el<HTMLOListElement>('rows');
  const view = el('view');
  const note = el('note');
  const live = el('live');
  const q = el<HTMLInputElement>('q');
  const workspaceSelect = el<HTMLSelectElement>('workspace');
  const older = el<HTMLButtonElement>('older');
  const newer = el<HTMLButtonElement>('newer');
  const narrow = window.matchMedia('(max-width: 759px)');
  const webhooksPanel = el('webhooks-panel');
  /** Whether the server manages webhook endpoints: the panel, and deliveries under the events of a message. */
  const hooksServed = webhooksPanel.hasAttribute('data-served');

  const state = {
    q: '',
    workspace: '',
    after: null as string | null,
    /** The `after` cursors of the pages before this one, for "Newer". */
    history: [] as (string | null)[],
    rows: [] as Summary[],
    hasMore: false,
    openId: null as string | null,
    open: null as Message | null,
    tab: 'html' as Tab,
    remote: false,
    newMail: 0,
    clock: { now: 0, mode: 'real' as Clock['mode'], at: 0 },
    endpoints: null as { endpoints: Endpoint[]; workspaces: Workspace[] } | null,
  };

  /** An element with attributes (false and null ones left out) and children; strings become text, never markup. */
  function h<K extends keyof HTMLElementTagNameMap>(
    tag: K,
    attrs: Record<string, string | boolean | null | undefined> = {},
    ...children: (Node | string | null | undefined | false)[]
  ): HTMLElementTagNameMap[K] {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) if (v !== false && v != null) node.setAttribute(k, v === true ? '' : v);
    for (const c of children) if (c != null && c !== false) node.append(c);
    return node;
  }

  class ApiError extends Error {
    status: number;
    constructor(status: number, message: string) {
      super(message);
      this.status = status;
    }
  }

  async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status === 401) {
      signedOut();
      throw new ApiError(401, 'Signed out.');
    }
    if (!res.ok) {
      const problem = (await res.json().catch(() => ({}))) as { detail?: string; title?: string };
      throw new ApiError(res.status, problem.detail || problem.title || `The server answered ${res.status}.`);
    }
    return (res.status === 204 ? undefined : await res.json()) as T;
  }

  function say(text: string, ...extra: Node[]) {
    note.replaceChildren(text, ...extra);
  }

  function signedOut() {
    source?.close();
    live.textContent = 'Signed out';
    say('Signed out: open the inbox address svc serve printed to sign in again.');
  }

  // ---- formatting -------------------------------------------------------------------------------------------

  const serviceNow = () =>
    state.clock.mode === 'real' ? state.clock.now + (Date.now() - state.clock.at) : state.clock.now;
  const exact = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
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
  const time = (iso: string) => h('time', { datetime: iso, title: exact(iso), 'data-relative': true }, relative(iso));
  const refreshTimes = () => {
    for (const t of document.querySelectorAll<HTMLTimeElement>('time[data-relative]'))
      t.textContent = relative(t.dateTime);
  };
  function size(n: number): string {
    if (n < 1024) return `${n} B`;
    if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
    return `${(n / 1024 / 1024).toFixed(1)} MB`;
  }
  /** The display name of an address (`"Shop" <orders@example.test>` → `Shop`), else the address. */
  const nameOf = (from: string) => /^\s*"?([^"<]*?)"?\s*<[^>]*>\s*$/.exec(from)?.[1]?.trim() || from;
  const badge = (status: string) => h('span', { class: `badge ${status}` }, status);
  const clip = () => {
    const icon = (el<HTMLTemplateElement>('clip').content.firstElementChild as Element).cloneNode(true);
    return h('span', { title: 'Has attachments' }, icon, h('span', { class: 'vh' }, 'has attachments'));
  };
  const messagePath = (id: string) => `/sandbox/messages/${encodeURIComponent(id)}`;

  // ---- the address bar --------------------------------------------------------------------------------------

  function readLocation() {
    const url = new URL(location.href);
    state.q = url.searchParams.get('q') ?? '';
    state.workspace = url.searchParams.get('workspace') ?? '';
    state.after = url.searchParams.get('after');
    const m = /^\/messages\/([^/]+)$/.exec(url.pathname);
    state.openId = m ? decodeURIComponent(m[1]!) : null;
    q.value = state.q;
    workspaceSelect.value = state.workspace;
  }
  function urlFor(openId: string | null): string {
    const p = new URLSearchParams();
    if (state.q) p.set('q', state.q);
    if (state.workspace) p.set('workspace', state.workspace);
    if (state.after) p.set('after', state.after);
    const query = p.toString();
    return (openId ? `/messages/${encodeURIComponent(openId)}` : '/') + (query ? `?${query}` : '');
  }
  const remember = () => history.pushState(null, '', urlFor(state.openId));

  // ---- the list ---------------------------------------------------------------------------------------------

  let listSerial = 0;
  async function loadList() {
    const serial = ++listSerial;
    const p = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (state.q) p.set('q', state.q);
    if (state.workspace) p.set('workspace_id', state.workspace);
    if (state.after) p.set('after', state.after);
    let page: { data: Summary[]; has_more: boolean };
    try {
      page = await api('GET', `/sandbox/messages?${p}`);
    } catch (err) {
      if (err instanceof ApiError && err.status === 400 && state.after) {
        // The page's anchor was deleted: start again from the newest.
        state.after = null;
        state.history = [];
        history.replaceState(null, '', urlFor(state.openId));
        return loadList();
      }
      if (!(err instanceof ApiError && err.status === 401)) say((err as Error).message);
      if (rowsEl.getAttribute('aria-busy') === 'true') {
        rowsEl.removeAttribute('aria-busy');
        rowsEl.replaceChildren(h('li', { class: 'empty' }, 'The messages could not be loaded.'));
      }
      return;
    }
    if (serial !== listSerial) return; // a later load has begun
    state.rows = page.data;
    state.hasMore = page.has_more;
    state.newMail = 0;
    renderList();
  }

  let refreshTimer: ReturnType<typeof setTimeout> | undefined;
  /** One reload for a burst of news. */
  function refreshSoon() {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(() => void loadList(), 150);
  }

  function rowOf(m: Summary): HTMLLIElement {
    const recipients = [...m.to, ...m.cc];
    const link = h(
      'a',
      {
        class: `row${m.read ? '' : ' unread'}`,
        href: urlFor(m.id),
        'data-id': m.id,
        'aria-current': m.id === state.openId ? 'true' : null,
      },
      h(
        'span',
        { class: 'who', title: m.from ?? '' },
        m.read ? null : h('span', { class: 'dot' }),
        m.read ? null : h('span', { class: 'vh' }, 'Unread. '),
        h('span', { class: 'vh' }, 'From '),
        m.from ? nameOf(m.from) : '(no sender)',
      ),
      h('span', { class: 'when' }, time(m.received_at)),
      h('span', { class: 'subject' }, h('span', { class: 'vh' }, '. Subject: '), m.subject ?? '(no subject)'),
      h(
        'span',
        { class: 'facts' },
        m.status ? badge(m.status) : null,
        m.workspace ? h('span', { class: 'ws', title: 'Workspace' }, m.workspace.name) : null,
        m.has_attachments ? clip() : null,
        h('span', { class: 'size' }, size(m.size)),
      ),
      h(
        'span',
        { class: 'preview' },
        h(
          'span',
          { class: 'to' },
          h('span', { class: 'vh' }, '. '),
          `To ${recipients.length ? recipients.join(', ') : '(no recipient)'}`,
        ),
        m.preview ? ` — ${m.preview}` : null,
      ),
    );
    return h('li', {}, link);
  }

  const rowLinks = () => [...rowsEl.querySelectorAll<HTMLAnchorElement>('a.row')];
  const focusedRowId = () =>
    (document.activeElement as HTMLElement | null)?.closest?.('a.row')?.getAttribute('data-id') ?? null;

  /** The empty list: what matches nothing, or, while nothing is caught, how to send a first message. */
  function emptyList(): Node {
    if (state.q || state.workspace) return h('li', { class: 'empty' }, 'No message matches this search.');
    const first = document.getElementById('first-send') as HTMLTemplateElement | null;
    if (first) return first.content.cloneNode(true);
    return h('li', { class: 'empty' }, 'No mail caught yet: send some through the API or to the SMTP port.');
  }

  function renderList() {
    const focused = focusedRowId();
    rowsEl.removeAttribute('aria-busy');
    rowsEl.replaceChildren(...(state.rows.length ? state.rows.map(rowOf) : [emptyList()]));
    older.disabled = !state.hasMore;
    newer.disabled = state.after === null;
    if (focused)
      rowLinks()
        .find((a) => a.dataset.id === focused)
        ?.focus();
    if (state.newMail === 0 && note.querySelector('button[data-newest]')) say('');
  }

  function replaceRow(m: Summary) {
    const i = state.rows.findIndex((r) => r.id === m.id);
    if (i < 0) return;
    state.rows[i] = m;
    const old = rowLinks().find((a) => a.dataset.id === m.id);
    if (!old) return;
    const hadFocus = document.activeElement === old;
    const fresh = rowOf(m);
    old.parentElement!.replaceWith(fresh);
    if (hadFocus) (fresh.firstElementChild as HTMLElement).focus();
  }

  function markCurrent() {
    for (const a of rowLinks()) {
      if (a.dataset.id === state.openId) a.setAttribute('aria-current', 'true');
      else a.removeAttribute('aria-current');
    }
  }

  function moveFocus(step: number) {
    const links = rowLinks();
    if (!links.length) return;
    const at = links.findIndex(
      (a) =>
        a === document.activeElement || (document.activeElement === document.body && a.dataset.id === state.openId),
    );
    const next = links[Math.max(0, Math.min(links.length - 1, at < 0 ? 0 : at + step))]!;
    next.focus();
    next.scrollIntoView({ block: 'nearest' });
  }

  function removeRows(ids: string[] | 'all') {
    const gone = (id: string) => ids === 'all' || ids.includes(id);
    const links = rowLinks();
    const focused = focusedRowId();
    // Focus moves to the row after a deleted focused one (or before it, at the end).
    let refocus: string | null = null;
    if (focused && gone(focused)) {
      const i = links.findIndex((a) => a.dataset.id === focused);
      refocus =
        [...links.slice(i + 1), ...links.slice(0, i).reverse()].find((a) => !gone(a.dataset.id!))?.dataset.id ?? null;
    }
    state.rows = state.rows.filter((r) => !gone(r.id));
    renderList();
    if (refocus)
      rowLinks()
        .find((a) => a.dataset.id === refocus)
        ?.focus();
    else if (focused && gone(focused)) rowsEl.focus();
    if (state.openId && gone(state.openId)) {
      state.open = null;
      view.replaceChildren(h('p', { class: 'empty' }, 'This message was deleted.'));
    }
  }

  async function deleteOne(id: string) {
    try {
      await api('DELETE', messagePath(id));
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) return say((err as Error).message);
    }
    const wasOpen = state.openId === id;
    removeRows([id]);
    if (wasOpen) closeView('replace');
    say('Message deleted.');
    if (state.rows.length === 0 && state.hasMore) void loadList();
  }

  const confirmAll = el<HTMLDialogElement>('confirm-all');
  el('delete-all').addEventListener('click', () => {
    confirmAll.returnValue = '';
    confirmAll.showModal();
  });
  confirmAll.addEventListener('close', async () => {
    if (confirmAll.returnValue !== 'confirm') return;
    try {
      await api('DELETE', '/sandbox/messages');
    } catch (err) {
      return say((err as Error).message);
    }
    state.after = null;
    state.history = [];
    state.hasMore = false;
    removeRows('all');
    closeView('replace');
    say('All messages deleted.');
  });

  rowsEl.addEventListener('click', (e) => {
    const link = (e.target as HTMLElement).closest<HTMLAnchorElement>('a.row');
    if (!link || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    void openMessage(link.dataset.id!, true);
  });

  older.addEventListener('click', () => {
    if (!state.rows.length) return;
    state.history.push(state.after);
    state.after = state.rows[state.rows.length - 1]!.id;
    remember();
    void loadList().then(() => rowLinks()[0]?.focus());
  });
  newer.addEventListener('click', () => {
    state.after = state.history.pop() ?? null;
    remember();
    void loadList().then(() => rowLinks()[0]?.focus());
  });

  el<HTMLFormElement>('search').addEventListener('submit', (e) => {
    e.preventDefault();
    state.q = q.value.trim();
    state.workspace = workspaceSelect.value;
    state.after = null;
    state.history = [];
    remember();
    void loadList();
  });
  workspaceSelect.addEventListener('change', () => el<HTMLFormElement>('search').requestSubmit());

  function addWorkspace(w: Workspace | null) {
    if (!w || [...workspaceSelect.options].some((o) => o.value === w.id)) return;
    workspaceSelect.append(h('option', { value: w.id }, w.name));
  }

  // ---- one message ------------------------------------------------------------------------------------------

  const placeholder = () => h('p', { class: 'empty' }, 'Select a message to read it.');

  /** Back to the list alone; the address is pushed (a new history entry), replaced, or left. */
  function closeView(address: 'push' | 'replace' | 'keep' = 'push') {
    const was = state.openId;
    state.openId = null;
    state.open = null;
    if (address === 'push') remember();
    if (address === 'replace') history.replaceState(null, '', urlFor(null));
    document.body.classList.remove('reading');
    view.replaceChildren(placeholder());
    markCurrent();
    if (was)
      rowLinks()
        .find((a) => a.dataset.id === was)
        ?.focus();
  }

  async function openMessage(id: string, push: boolean) {
    if (state.openId !== id) {
      state.remote = false;
      state.tab = 'html';
    }
    state.openId = id;
    if (push) remember();
    markCurrent();
    document.body.classList.add('reading');
    let m: Message;
    try {
      m = await api('GET', messagePath(id));
    } catch (err) {
      if (state.openId === id) {
        view.replaceChildren(
          h(
            'p',
            { class: 'empty' },
            err instanceof ApiError && err.status === 404 ? 'This message no longer exists.' : (err as Error).message,
          ),
        );
      }
      return;
    }
    if (state.openId !== id) return;
    state.open = m;
    if (state.tab === 'html' && !m.html) state.tab = 'text';
    renderView();
    if (narrow.matches) el('view-h').focus();
    if (!m.read) {
      api<Summary>('POST', `${messagePath(id)}/read`).then(
        (s) => {
          replaceRow(s);
          if (state.open === m) setRead(m, s.read);
        },
        () => {},
      );
    }
  }

  function headerValue(m: Message, name: string): string | null {
    return m.headers.find((x) => x.name.toLowerCase() === name)?.value ?? null;
  }

  function metaOf(m: Message): HTMLDListElement {
    const pairs: [string, Node | string | null][] = [
      ['From', m.from ?? m.envelope.mail_from ?? '(none)'],
      ['To', m.to.join(', ') || '(none)'],
      ['Cc', m.cc.length ? m.cc.join(', ') : null],
      ['Reply-To', headerValue(m, 'reply-to')],
      ['Date', h('span', {}, headerValue(m, 'date') ?? '(none)', ' · received ', time(m.received_at))],
      ['Size', size(m.size)],
      ['Message-ID', headerValue(m, 'message-id')],
      ['Envelope', `MAIL FROM ${m.envelope.mail_from ?? '<>'} · RCPT TO ${m.envelope.rcpt_to.join(', ')}`],
      [
        'Status',
        m.status ? h('span', {}, badge(m.status), m.workspace ? ` · workspace ${m.workspace.name}` : '') : null,
      ],
      [
        'DKIM',
        h(
          'span',
          { class: `dkim-${m.dkim}` },
          m.dkim === 'none' ? 'none (not signed)' : `${m.dkim}${m.dkim_domain ? ` · signed by ${m.dkim_domain}` : ''}`,
        ),
      ],
    ];
    return h(
      'dl',
      { class: 'meta', id: 'meta' },
      ...pairs.filter(([, v]) => v != null).flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
    );
  }

  /** Whether the HTML asks for anything from elsewhere (images, styles, fonts), which its policy blocks. */
  const wantsRemote = (html: string) =>
    /<(?:img|image|input|video)\b[^>]*\b(?:src|background|poster)\s*=\s*["']?\s*(?:https?:)?\/\//i.test(html) ||
    /\bbackground\s*=\s*["']?\s*(?:https?:)?\/\//i.test(html) ||
    /url\(\s*["']?\s*(?:https?:)?\/\//i.test(html) ||
    /<link\b[^>]*\bhref\s*=\s*["']?\s*(?:https?:)?\/\//i.test(html);

  async function panelContent(m: Message, tab: Tab): Promise<Node[]> {
    if (tab === 'html') {
      if (!m.html) return [h('p', { class: 'empty' }, 'This message has no HTML part.')];
      const frame = h('iframe', {
        class: 'frame',
        title: 'The message as HTML',
        // No allow-scripts, no allow-same-origin: the document can run nothing and reach nothing of this page.
        sandbox: 'allow-popups allow-popups-to-escape-sandbox',
        referrerpolicy: 'no-referrer',
        src: `${messagePath(m.id)}/html${state.remote ? '?remote_images=allow' : ''}`,
      });
      if (state.remote || !wantsRemote(m.html)) return [frame];
      const allow = h('button', { type: 'button' }, 'Load remote images');
      allow.addEventListener('click', () => {
        state.remote = true;
        void selectTab('html', true);
      });
      return [h('p', { class: 'remote', role: 'note' }, 'Remote images are blocked.', allow), frame];
    }
    if (tab === 'text') return [h('pre', { class: 'body' }, m.text ?? '(This message has no text part.)')];
    if (tab === 'headers') {
      return [
        h(
          'table',
          { class: 'headers' },
          h('caption', { class: 'vh' }, 'Header fields, in order'),
          h('tbody', {}, ...m.headers.map((x) => h('tr', {}, h('th', { scope: 'row' }, x.name), h('td', {}, x.value)))),
        ),
      ];
    }
    const res = await fetch(`${messagePath(m.id)}/raw`, { credentials: 'same-origin' });
    if (!res.ok) return [h('p', { class: 'empty' }, `The source could not be read (${res.status}).`)];
    const bytes = new Uint8Array(await res.arrayBuffer());
    const shown = new TextDecoder().decode(bytes.subarray(0, RAW_SHOWN));
    const nodes: Node[] = [
      h(
        'p',
        {},
        h('a', { href: `${messagePath(m.id)}/raw`, download: `${m.id}.eml`, class: 'button' }, 'Download .eml'),
      ),
      h('pre', { class: 'raw', 'aria-label': 'Message source' }, shown),
    ];
    if (bytes.length > RAW_SHOWN)
      nodes.push(
        h('p', { class: 'empty' }, `The first ${size(RAW_SHOWN)} of ${size(bytes.length)}; download it for the rest.`),
      );
    return nodes;
  }

  const TABS: [Tab, string][] = [
    ['html', 'HTML'],
    ['text', 'Text'],
    ['headers', 'Headers'],
    ['raw', 'Raw'],
  ];

  async function selectTab(tab: Tab, focus: boolean) {
    const m = state.open;
    if (!m) return;
    state.tab = tab;
    for (const [k] of TABS) {
      const button = el(`tab-${k}`);
      const panel = el(`panel-${k}`);
      const on = k === tab;
      button.setAttribute('aria-selected', String(on));
      button.tabIndex = on ? 0 : -1;
      panel.hidden = !on;
      if (!on) panel.replaceChildren();
    }
    if (focus) el(`tab-${tab}`).focus();
    const content = await panelContent(m, tab);
    if (state.open === m && state.tab === tab) el(`panel-${tab}`).replaceChildren(...content);
  }

  function tabsOf(): HTMLElement[] {
    const list = h('div', { role: 'tablist', 'aria-label': 'Message content' });
    const panels = TABS.map(([k, label]) => {
      const on = k === state.tab;
      const button = h(
        'button',
        {
          type: 'button',
          role: 'tab',
          id: `tab-${k}`,
          'aria-controls': `panel-${k}`,
          'aria-selected': String(on),
          tabindex: on ? '0' : '-1',
        },
        label,
      );
      button.addEventListener('click', () => void selectTab(k, false));
      list.append(button);
      return h('div', {
        role: 'tabpanel',
        id: `panel-${k}`,
        'aria-labelledby': `tab-${k}`,
        tabindex: '0',
        hidden: !on,
      });
    });
    list.addEventListener('keydown', (e) => {
      const i = TABS.findIndex(([k]) => k === state.tab);
      const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: TABS.length - 1 }[e.key];
      if (to === undefined) return;
      e.preventDefault();
      void selectTab(TABS[(to + TABS.length) % TABS.length]![0], true);
    });
    return [list, ...panels];
  }

  function attachmentsOf(m: Message): HTMLElement | null {
    if (!m.attachments.length) return null;
    return h(
      'section',
      { class: 'section', 'aria-labelledby': 'att-h' },
      h('h3', { id: 'att-h' }, `Attachments (${m.attachments.length})`),
      h(
        'ul',
        {},
        ...m.attachments.map((a, n) =>
          h(
            'li',
            {},
            h(
              'a',
              { href: `${messagePath(m.id)}/attachments/${n}`, download: a.filename ?? `attachment-${n}` },
              a.filename ?? `attachment ${n}`,
            ),
            ` · ${a.content_type} · ${size(a.size)}${a.content_id ? ' · inline' : ''}`,
          ),
        ),
      ),
    );
  }

  function detailText(detail: Record<string, unknown>): string {
    return Object.entries(detail)
      .map(([k, v]) => `${k}: ${v !== null && typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
      .join(' · ');
  }

  /** One webhook attempt: outcome, attempt number, time, status code or error, duration (and the event type). */
  function attemptOf(a: Attempt, when: Node, withType: boolean): HTMLLIElement {
    return h(
      'li',
      { class: 'attempt', 'data-attempt': String(a.attempt), 'data-ok': String(a.ok) },
      h('span', { class: `result ${a.ok ? 'ok' : 'failed'}` }, a.ok ? 'ok' : 'failed'),
      withType ? ` ${a.event_type}` : null,
      ` #${a.attempt} · `,
      when,
      // No-break spaces: a narrow panel wraps between the parts, not inside "HTTP 500" or "12 ms".
      ` · ${(a.error ?? String(a.status_code)).replace(/ /g, '\u00a0')} · ${a.duration_ms}\u00a0ms`,
    );
  }

  /** An event's webhook deliveries: one entry per endpoint, then each delivery's attempts, oldest first. */
  function deliveriesOf(e: TimelineEvent): HTMLElement | null {
    if (!e.deliveries.length) return null;
    const byEndpoint = new Map<string, Delivery[]>();
    for (const d of e.deliveries) byEndpoint.set(d.endpoint_id, [...(byEndpoint.get(d.endpoint_id) ?? []), d]);
    return h(
      'ul',
      { class: 'deliveries', 'aria-label': `Webhook deliveries of ${e.type}` },
      ...[...byEndpoint].map(([endpointId, deliveries]) =>
        h(
          'li',
          { 'data-endpoint-id': endpointId },
          deliveries[0]!.url
            ? h('code', { class: 'url' }, deliveries[0]!.url)
            : h('span', {}, `removed endpoint ${endpointId}`),
          ...deliveries.flatMap((d, n) => [
            deliveries.length > 1 ? h('span', { class: 'nth' }, `delivery ${n + 1} of ${deliveries.length}`) : null,
            h(
              'ol',
              { class: 'attempts', 'data-delivery-id': String(d.delivery_id) },
              ...d.attempts.map((a) =>
                attemptOf(a, h('time', { datetime: a.at, title: exact(a.at) }, a.at.slice(11, 19)), false),
              ),
            ),
          ]),
        ),
      ),
    );
  }

  function redeliverButton(e: TimelineEvent): HTMLButtonElement {
    const button = h(
      'button',
      { type: 'button', class: 'small', 'data-redeliver': e.id },
      'Redeliver',
      h('span', { class: 'vh' }, ` ${e.type}`),
    );
    button.addEventListener('click', async () => {
      try {
        const r = await api<{ endpoint_ids: string[] }>(
          'POST',
          `/sandbox/events/${encodeURIComponent(e.id)}/redeliver`,
          {},
        );
        const n = r.endpoint_ids.length;
        say(
          n
            ? `Delivering ${e.type} again to ${n} endpoint${n === 1 ? '' : 's'}.`
            : `No active webhook endpoint takes ${e.type} events.`,
        );
      } catch (err) {
        say((err as Error).message);
      }
    });
    return button;
  }

  function timelineOf(m: Message): HTMLElement | null {
    if (!m.events) return null;
    return h(
      'section',
      { class: 'section', id: 'timeline', 'aria-labelledby': 'timeline-h' },
      h('h3', { id: 'timeline-h' }, 'Events'),
      m.events.length
        ? h(
            'ol',
            { class: 'timeline' },
            ...m.events.map((e) =>
              h(
                'li',
                { 'data-type': e.type, 'data-event-id': e.id },
                h('time', { datetime: e.occurred_at, title: exact(e.occurred_at) }, e.occurred_at.slice(11, 23)),
                ' ',
                h('strong', {}, e.type),
                ' ',
                h('span', { class: 'detail' }, detailText(e.detail)),
                hooksServed ? ' ' : null,
                hooksServed ? redeliverButton(e) : null,
                deliveriesOf(e),
              ),
            ),
          )
        : h('p', { class: 'empty' }, 'No events yet.'),
    );
  }

  function elsewhereOf(m: Message): HTMLElement {
    return h(
      'section',
      { class: 'section', 'aria-labelledby': 'elsewhere-h' },
      h('h3', { id: 'elsewhere-h' }, 'Elsewhere'),
      h(
        'ul',
        {},
        m.message_id
          ? h(
              'li',
              {},
              'API (with an API key): ',
              h(
                'a',
                { href: `/v1/emails/${encodeURIComponent(m.message_id)}` },
                h('code', {}, `GET /v1/emails/${m.message_id}`),
              ),
            )
          : null,
        h('li', {}, 'Command line: ', h('code', {}, `svc inbox show ${m.id}`)),
      ),
    );
  }

  function setRead(m: Message, read: boolean) {
    m.read = read;
    const toggle = document.getElementById('toggle-read');
    if (toggle) toggle.textContent = read ? 'Mark unread' : 'Mark read';
  }

  function renderView() {
    const m = state.open!;
    const back = h('button', { type: 'button', class: 'back' }, '← Messages');
    back.addEventListener('click', () => closeView());
    const toggle = h('button', { type: 'button', id: 'toggle-read' }, m.read ? 'Mark unread' : 'Mark read');
    toggle.addEventListener('click', async () => {
      const s = await api<Summary>('POST', `${messagePath(m.id)}/${m.read ? 'unread' : 'read'}`).catch(
        (err: Error) => void say(err.message),
      );
      if (!s) return;
      replaceRow(s);
      if (state.open === m) setRead(m, s.read);
    });
    const del = h('button', { type: 'button', class: 'danger' }, 'Delete');
    del.addEventListener('click', () => void deleteOne(m.id));
    view.replaceChildren(
      h(
        'div',
        { class: 'view-head' },
        back,
        h('h2', { id: 'view-h', tabindex: '-1' }, m.subject ?? '(no subject)'),
        h(
          'div',
          { class: 'actions' },
          toggle,
          h('a', { class: 'button', href: `${messagePath(m.id)}/raw`, download: `${m.id}.eml` }, 'Download .eml'),
          del,
        ),
      ),
      metaOf(m),
      ...[attachmentsOf(m), timelineOf(m)].filter((n): n is HTMLElement => n !== null),
      ...tabsOf(),
      elsewhereOf(m),
    );
    void selectTab(state.tab, false);
  }

  let reopenTimer: ReturnType<typeof setTimeout> | undefined;
  /** The open message's status and timeline changed: both are read again, the tab shown is left as it is. */
  function refreshOpen() {
    clearTimeout(reopenTimer);
    reopenTimer = setTimeout(async () => {
      const m = state.open;
      if (!m) return;
      const fresh = await api<Message>('GET', messagePath(m.id)).catch(() => null);
      if (!fresh || state.open !== m) return;
      Object.assign(m, { status: fresh.status, events: fresh.events, read: fresh.read });
      el('meta').replaceWith(metaOf(m));
      const timeline = timelineOf(m);
      const focused = (document.activeElement as HTMLElement | null)
        ?.closest?.('#timeline [data-redeliver]')
        ?.getAttribute('data-redeliver');
      if (timeline) document.getElementById('timeline')?.replaceWith(timeline);
      if (focused) timeline?.querySelector<HTMLElement>(`[data-redeliver="${CSS.escape(focused)}"]`)?.focus();
    }, 100);
  }

  // ---- the sandbox panels -----------------------------------------------------------------------------------

  const clockNow = el<HTMLTimeElement>('clock-now');
  const clockMode = el('clock-mode');
  const moves = el('clock-moves');

  function setClock(c: Clock) {
    state.clock = { now: Date.parse(c.now), mode: c.mode, at: Date.now() };
    renderClock();
  }
  function renderClock() {
    const iso = new Date(serviceNow()).toISOString();
    clockNow.dateTime = iso;
    clockNow.textContent = exact(iso);
    clockMode.textContent = state.clock.mode === 'manual' ? 'manual' : 'real time';
    moves.hidden = state.clock.mode !== 'manual';
  }
  async function loadClock() {
    setClock(await api<Clock>('GET', '/sandbox/clock'));
  }
  moves.addEventListener('click', async (e) => {
    const button = (e.target as HTMLElement).closest<HTMLButtonElement>('button[data-advance]');
    if (!button) return;
    const buttons = [...moves.querySelectorAll('button')];
    for (const b of buttons) b.disabled = true;
    try {
      const moved = await api<{ now: string; ran: number }>('POST', '/sandbox/clock', {
        advance_seconds: Number(button.dataset.advance),
      });
      setClock({ now: moved.now, mode: 'manual' });
      say(`Clock moved to ${exact(moved.now)}; ${moved.ran} job${moved.ran === 1 ? '' : 's'} ran.`);
    } catch (err) {
      say((err as Error).message);
    } finally {
      for (const b of buttons) b.disabled = false;
      button.focus();
    }
  });

  /** Webhook endpoints by workspace with their status and recent attempts, when the server manages them. */
  async function loadWebhooks() {
    if (!hooksServed) return;
    let list: { data: Endpoint[]; workspaces: Workspace[] };
    try {
      list = await api('GET', '/sandbox/webhooks');
    } catch {
      return;
    }
    // Only what the panel shows is kept: not the endpoints' secrets.
    const endpoints = list.data.map(
      ({ id, workspace_id, url, events, status, disabled_at, recent_attempts }): Endpoint => ({
        id,
        workspace_id,
        url,
        events,
        status,
        disabled_at,
        recent_attempts,
      }),
    );
    state.endpoints = { endpoints, workspaces: list.workspaces };
    renderWebhooks();
    webhooksPanel.hidden = false;
  }

  let webhooksTimer: ReturnType<typeof setTimeout> | undefined;
  /** At most one reload of the panel every 200 ms, however busy the receivers are. */
  function webhooksSoon() {
    if (webhooksTimer !== undefined) return;
    webhooksTimer = setTimeout(() => {
      webhooksTimer = undefined;
      void loadWebhooks();
    }, 200);
  }

  async function enable(e: Endpoint) {
    try {
      await api('POST', `/sandbox/webhooks/${encodeURIComponent(e.id)}/enable`);
    } catch (err) {
      return say((err as Error).message);
    }
    say(`Webhook endpoint ${e.url} enabled.`);
    await loadWebhooks();
    document.querySelector<HTMLElement>(`#webhooks [data-endpoint-id="${CSS.escape(e.id)}"]`)?.focus();
  }

  function endpointOf(e: Endpoint): HTMLLIElement {
    const disabled = e.status === 'disabled_by_failures';
    const enableButton = disabled
      ? h(
          'button',
          { type: 'button', class: 'small', 'data-enable': e.id },
          'Enable',
          h('span', { class: 'vh' }, ` ${e.url}`),
        )
      : null;
    enableButton?.addEventListener('click', () => void enable(e));
    const attempts = e.recent_attempts.slice(0, PANEL_ATTEMPTS);
    return h(
      'li',
      { class: 'endpoint', 'data-endpoint-id': e.id, tabindex: '-1' },
      h('code', { class: 'url' }, e.url),
      h(
        'p',
        { class: 'state' },
        h('span', { class: `badge ${e.status}` }, e.status.replace(/_/g, ' ')),
        ' ',
        h('span', { class: 'filter' }, e.events ? e.events.join(', ') : 'all events'),
      ),
      disabled
        ? h(
            'p',
            { class: 'state' },
            'Disabled ',
            e.disabled_at ? time(e.disabled_at) : '',
            ' after seven failed attempts. ',
            enableButton,
          )
        : null,
      attempts.length
        ? h(
            'ol',
            { class: 'attempts', 'aria-label': `Recent attempts to ${e.url}, newest first` },
            ...attempts.map((a) => attemptOf(a, time(a.at), true)),
          )
        : h('p', { class: 'state' }, 'No attempts yet.'),
    );
  }

  function renderWebhooks() {
    const { endpoints, workspaces } = state.endpoints!;
    // The panel is drawn anew on every change: the focus stays on the Enable button or the endpoint that had it.
    const active = document.activeElement as HTMLElement | null;
    const focused = active?.closest?.('#webhooks [data-enable]')?.getAttribute('data-enable');
    const focusedEndpoint = active?.matches?.('#webhooks li.endpoint') ? active.getAttribute('data-endpoint-id') : null;
    const names = new Map(workspaces.map((w) => [w.id, w.name]));
    const byWorkspace = new Map<string, Endpoint[]>();
    for (const e of endpoints) byWorkspace.set(e.workspace_id, [...(byWorkspace.get(e.workspace_id) ?? []), e]);
    el('webhooks').replaceChildren(
      ...(endpoints.length
        ? [...byWorkspace].map(([id, list]) =>
            h(
              'section',
              { class: 'hooks', 'aria-labelledby': `hooks-${id}` },
              h('h3', { id: `hooks-${id}` }, names.get(id) ?? id),
              h('ul', { class: 'endpoints' }, ...list.map(endpointOf)),
            ),
          )
        : [
            h(
              'p',
              {},
              'No webhook endpoints. Add one with ',
              h('code', {}, 'svc sandbox webhooks add --workspace ID --url URL'),
              '.',
            ),
            h(
              'p',
              {},
              'Or take the events on your machine without one: ',
              h('code', {}, 'svc webhooks listen --forward-to URL'),
              '.',
            ),
          ]),
    );
    if (focused) document.querySelector<HTMLElement>(`#webhooks [data-enable="${CSS.escape(focused)}"]`)?.focus();
    else if (focusedEndpoint)
      document
        .querySelector<HTMLElement>(`#webhooks li.endpoint[data-endpoint-id="${CSS.escape(focusedEndpoint)}"]`)
        ?.focus();
  }

  // ---- live -------------------------------------------------------------------------------------------------

  let source: EventSource | null = null;
  function connect() {
    source = new EventSource('/sandbox/stream');
    // On every (re)connection the list is read again: nothing that happened while disconnected is missed.
    source.addEventListener('open', () => {
      live.textContent = 'Live';
      void loadList();
      void loadClock().catch(() => {});
      void loadWebhooks();
    });
    source.addEventListener('error', () => {
      if (live.textContent !== 'Signed out') live.textContent = 'Reconnecting…';
    });
    source.addEventListener('message', (e) => {
      const m = JSON.parse(e.data) as Summary;
      addWorkspace(m.workspace);
      if (state.after === null) {
        refreshSoon();
        say(`New message: ${m.subject ?? '(no subject)'}`);
      } else {
        state.newMail++;
        const show = h('button', { type: 'button', 'data-newest': '' }, 'Show the newest');
        show.addEventListener('click', () => {
          state.after = null;
          state.history = [];
          remember();
          void loadList();
        });
        say(`${state.newMail} new message${state.newMail === 1 ? '' : 's'}. `, show);
      }
    });
    source.addEventListener('status', (e) => {
      const change = JSON.parse((e as MessageEvent).data) as { message_id: string; status: string };
      for (const r of state.rows.filter((x) => x.message_id === change.message_id))
        replaceRow({ ...r, status: change.status });
      if (state.open?.message_id === change.message_id) refreshOpen();
    });
    source.addEventListener('deleted', (e) => {
      const d = JSON.parse((e as MessageEvent).data) as { ids?: string[]; all?: boolean };
      removeRows(d.all ? 'all' : (d.ids ?? []));
    });
    source.addEventListener('read', (e) => {
      const d = JSON.parse((e as MessageEvent).data) as { id: string; read: boolean };
      const r = state.rows.find((x) => x.id === d.id);
      if (r && r.read !== d.read) replaceRow({ ...r, read: d.read });
    });
    source.addEventListener('clock', (e) => {
      setClock(JSON.parse((e as MessageEvent).data) as Clock);
      refreshTimes();
    });
    source.addEventListener('webhooks', (e) => {
      const d = JSON.parse((e as MessageEvent).data) as { event_ids: string[] };
      webhooksSoon();
      if (state.open?.events?.some((ev) => d.event_ids.includes(ev.id))) refreshOpen();
    });
  }

  // ---- keys -------------------------------------------------------------------------------------------------

  document.addEventListener('keydown', (e) => {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
    const target = e.target as HTMLElement;
    if (target.closest('input, textarea, select, dialog, [contenteditable]')) {
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

  window.addEventListener('popstate', () => {
    readLocation();
    state.history = [];
    void loadList();
    if (state.openId) void openMessage(state.openId, false);
    else closeView('keep');
  });

  // Relative times and a real clock move on by themselves.
  setInterval(() => {
    if (state.clock.mode === 'real') renderClock();
  }, 1000);
  setInterval(refreshTimes, 30_000);

  readLocation();
  void loadClock().catch(() => {});
  void loadList();
  connect();
  if (state.openId) void openMessage(state.openId, false);
  void loadWebhooks();
}
