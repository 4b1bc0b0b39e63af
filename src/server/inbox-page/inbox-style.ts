// The inbox page's stylesheet (served as /inbox.css). Colours keep a contrast of at least 4.5:1 with their
// background, in the light theme and the dark one: the system's, unless the reader chose one (`data-theme` on the
// root, from the theme switch). The layout is one column up to 760 px wide (the sandbox panels below the list
// there), list and message side by side above, and the sandbox panels in a column of their own from 1280 px. The
// message's own parts (its HTML preview, source, headers, attachments) are styled in inbox-style-message.ts, its
// Checks tab in inbox-style-checks.ts.
import { CHECKS_CSS } from './inbox-style-checks.js';
import { MESSAGE_CSS } from './inbox-style-message.js';

const LIGHT = `
  color-scheme: light;
  --ink: #1b2230; --muted: #555f6e; --line: #d9dde3; --bg: #f5f6f8; --card: #fff; --accent: #1f4fc2;
  --on-accent: #fff; --focus: #b45309; --danger: #a1161b; --ok: #0b6b2f; --sel: #e8effc; --hover: #f2f4f7;
  --btn-line: #8a93a1; --btn-hover: #eef1f5; --disabled: #6b7280; --disabled-line: #c3c8cf; --bar: #1b2230;
  --info-bg: #e6eefc; --info: #1e4fb5; --ok-bg: #e3f5e8; --bad-bg: #fde7e8; --bad: #a1161b; --warn-bg: #fff1dc;
  --warn: #8a4b00; --none-bg: #eef0f3; --none: #454d5a; --pill-bg: #f0ebfa; --pill: #5b2d9e;
  --code-bg: #f7f8fa; --hl: #fff3c4; --stage: #e9ecf1;
  --syn-tag: #1450a3; --syn-attr: #8a3c00; --syn-val: #0b6b2f; --syn-comment: #5f6875; --syn-punct: #555f6e;
  --syn-entity: #a1161b; --syn-at: #7a2fb5;`;

const DARK = `
  color-scheme: dark;
  --ink: #e4e8ee; --muted: #a3adbb; --line: #343d4b; --bg: #0e131a; --card: #161c25; --accent: #8ab4ff;
  --on-accent: #0e131a; --focus: #f5a524; --danger: #ff9a9a; --ok: #7fe0a0; --sel: #1f2d44; --hover: #1d2531;
  --btn-line: #66707f; --btn-hover: #222b38; --disabled: #8a93a1; --disabled-line: #3a4350; --bar: #0a0e14;
  --info-bg: #1d2d4d; --info: #b3cbff; --ok-bg: #143323; --bad-bg: #3d1a1d; --bad: #ffb3b3; --warn-bg: #3a2a12;
  --warn: #ffd08f; --none-bg: #262d38; --none: #c9d0da; --pill-bg: #2c2240; --pill: #d5bdff;
  --code-bg: #10161e; --hl: #4a3d0c; --stage: #0b1016;
  --syn-tag: #7cc4ff; --syn-attr: #ffb86b; --syn-val: #8be39c; --syn-comment: #939dad; --syn-punct: #a3adbb;
  --syn-entity: #ffa3a3; --syn-at: #d7a6ff;`;

const BASE = `
:root { ${LIGHT}
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: var(--bg);
}
:root[data-theme=dark] { ${DARK} }
@media (prefers-color-scheme: dark) { :root:not([data-theme=light]) { ${DARK} } }
* { box-sizing: border-box; }
[hidden] { display: none !important; } /* also where a rule of ours sets display */
body { margin: 0; min-width: 320px; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 1px; }
button, input, select { font: inherit; color: inherit; }
button, .button {
  border: 1px solid var(--btn-line); background: var(--card); border-radius: 6px; padding: .35rem .7rem; cursor: pointer;
  text-decoration: none; display: inline-block; line-height: 1.3; color: var(--ink);
}
button:hover, .button:hover { background: var(--btn-hover); }
button:disabled { color: var(--disabled); border-color: var(--disabled-line); cursor: default; background: var(--card); }
button.danger { color: var(--danger); border-color: var(--danger); }
button.primary { background: var(--accent); color: var(--on-accent); border-color: var(--accent); font-weight: 600; }
button.primary:hover { background: var(--accent); filter: brightness(1.1); }
.vh { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.skip { position: absolute; left: -999px; top: 0; background: var(--card); padding: .5rem; z-index: 10; }
.skip:focus { left: .5rem; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .87rem; }
h1, h2, h3 { line-height: 1.25; }

.bar { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; padding: .6rem 1rem; background: var(--bar); color: #fff; }
.bar h1 { font-size: 1.05rem; margin: 0; white-space: nowrap; }
.bar form { display: flex; flex: 1 1 26rem; gap: .4rem; flex-wrap: wrap; }
.bar input[type=search] { flex: 1 1 12rem; min-width: 0; padding: .35rem .6rem; border-radius: 6px; border: 1px solid #8a93a1; background: var(--card); color: var(--ink); }
.bar select { padding: .35rem; border-radius: 6px; border: 1px solid #8a93a1; background: var(--card); color: var(--ink); max-width: 14rem; }
.bar button { background: #2c3547; color: #fff; border-color: #8a93a1; }
.bar button:hover { background: #3a4559; }
.bar .live { font-size: .85rem; color: #d5dae2; }
.bar .theme { background: #2c3547; color: #fff; }
.bar :focus-visible { outline-color: #fbbf24; }
.bar .ops-toggle { padding: .35rem .6rem; font-weight: 700; }
/* A search the server does not understand: what it says, under the box. */
.search-problem { flex-basis: 100%; margin: 0; padding: .3rem .6rem; border-radius: 6px; background: var(--bad-bg); color: var(--bad); font-size: .88rem; overflow-wrap: anywhere; }
.bar input[aria-invalid=true] { border-color: var(--bad); box-shadow: 0 0 0 1px var(--bad); }
/* The search operators, a popover under the bar; a click on one writes it into the box. */
.search-ops { position: fixed; inset: 3.5rem auto auto 1rem; margin: 0; width: min(34rem, calc(100vw - 1rem)); max-height: calc(100vh - 5rem);
  overflow: auto; padding: .7rem .9rem; border: 1px solid var(--line); border-radius: 8px; background: var(--card); color: var(--ink);
  box-shadow: 0 8px 24px rgb(0 0 0 / 25%); }
.search-ops h2 { font-size: .95rem; margin: 0 0 .4rem; }
.search-ops table { border-collapse: collapse; width: 100%; font-size: .86rem; }
.search-ops th, .search-ops td { text-align: left; vertical-align: top; padding: .25rem .3rem; border-top: 1px solid var(--line); }
.search-ops th { white-space: nowrap; font-weight: 400; }
.search-ops th button { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .82rem; padding: .05rem .4rem; }
.search-ops p { margin: .5rem 0 0; font-size: .84rem; color: var(--muted); }

.layout { display: grid; grid-template-columns: 1fr; gap: 1rem; padding: 1rem; max-width: 1800px; margin: 0 auto; }
.panels { display: flex; flex-wrap: wrap; gap: 1rem; }
.panel { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .6rem .8rem; flex: 1 1 16rem; }
.panel h2 { font-size: .95rem; margin: 0 0 .4rem; }
.panel p { margin: .2rem 0 .5rem; }
.moves { display: flex; gap: .4rem; flex-wrap: wrap; }
.tag { font-size: .8rem; border: 1px solid var(--line); border-radius: 999px; padding: 0 .5rem; color: var(--muted); }
main { display: grid; grid-template-columns: 1fr; gap: 1rem; min-width: 0; }
.list, .view { background: var(--card); border: 1px solid var(--line); border-radius: 8px; min-width: 0; }
.list-head, .view-head { display: flex; align-items: center; gap: .5rem; flex-wrap: wrap; padding: .6rem .8rem; border-bottom: 1px solid var(--line); }
.list-head h2 { font-size: 1rem; margin: 0; flex: 1; }
.note { margin: 0; padding: .3rem .8rem; color: var(--muted); font-size: .9rem; }
.note:empty { padding: 0; }
.note button { font-size: .85rem; padding: .1rem .5rem; }

/* A row reads like a mail client's: sender (and recipients) and time; the subject and the size; the start of the
   text; the status, workspace and tags as pills, and the attachment marker. */
.rows { list-style: none; margin: 0; padding: 0; }
.rows li { border-bottom: 1px solid var(--line); }
.row { display: grid; grid-template-columns: minmax(0, 1fr) auto; gap: .1rem .6rem; padding: .6rem .8rem; color: inherit; text-decoration: none; }
.row:hover { background: var(--hover); }
.row:focus-visible { outline-offset: -3px; } /* inside the row: the scrolling list would clip it */
.row[aria-current=true] { background: var(--sel); }
.row .who { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.row .to { color: var(--muted); font-size: .85rem; font-weight: 400; }
.row .when, .row .size { color: var(--muted); font-size: .82rem; white-space: nowrap; text-align: right; }
.row .size { align-self: start; padding-top: .1rem; }
.row .subject, .row .preview { overflow: hidden; overflow-wrap: anywhere;
  display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 2; }
.row .preview { grid-column: 1 / -1; color: var(--muted); font-size: .86rem; line-height: 1.35; }
.row .facts { grid-column: 1 / -1; display: flex; flex-wrap: wrap; gap: .25rem .35rem; align-items: center; font-size: .78rem; color: var(--muted); margin-top: .15rem; }
.row.unread .who, .row.unread .subject { font-weight: 700; }
.row .dot { display: inline-block; width: .55rem; height: .55rem; border-radius: 50%; background: var(--accent); margin-right: .35rem; vertical-align: middle; }
.pill { display: inline-block; max-width: 100%; overflow: hidden; text-overflow: ellipsis; white-space: nowrap;
  border-radius: 999px; padding: 0 .5rem; line-height: 1.5; font-size: .75rem; background: var(--pill-bg); color: var(--pill); }
.pill.ws { background: var(--none-bg); color: var(--none); }
.empty { padding: 1.5rem .8rem; color: var(--muted); }
.first-send p { margin: 0 0 .5rem; }
.first-send strong { color: var(--ink); }
.first-send pre { margin: 0 0 .8rem; padding: .5rem .6rem; background: var(--bg); border: 1px solid var(--line); border-radius: 6px;
  color: var(--ink); white-space: pre-wrap; overflow-wrap: anywhere; user-select: all; }
.panel code { overflow-wrap: anywhere; }
.pager { display: flex; justify-content: space-between; gap: .5rem; padding: .6rem .8rem; }
.clip { width: .95rem; height: .95rem; vertical-align: -2px; fill: none; stroke: currentColor; stroke-width: 2; }

.badge { display: inline-block; font-size: .75rem; font-weight: 600; border-radius: 999px; padding: 0 .5rem; line-height: 1.5; background: var(--info-bg); color: var(--info); }
.badge.delivered, .badge.active { background: var(--ok-bg); color: var(--ok); }
.badge.bounced, .badge.failed, .badge.disabled_by_failures { background: var(--bad-bg); color: var(--bad); }
.badge.complained { background: var(--warn-bg); color: var(--warn); }
.badge.suppressed, .badge.cancelled { background: var(--none-bg); color: var(--none); }
button.small { font-size: .8rem; padding: .05rem .45rem; }

.hooks h3 { font-size: .85rem; margin: .5rem 0 .2rem; color: var(--muted); }
.endpoints { list-style: none; margin: 0; padding: 0; }
.endpoint { border-top: 1px solid var(--line); padding: .4rem 0; }
.endpoint .state { font-size: .85rem; margin: .2rem 0; }
.endpoint .filter { color: var(--muted); overflow-wrap: anywhere; }
code.url { overflow-wrap: anywhere; }
.attempts { list-style: none; margin: .2rem 0 0; padding: 0; font-size: .82rem; }
.attempts li { margin: .1rem 0; overflow-wrap: anywhere; }
.result { font-weight: 600; }
.result.ok { color: var(--ok); }
.result.failed { color: var(--danger); }
.attempts time { font-variant-numeric: tabular-nums; }

.omitted { margin: .6rem .8rem; padding: .4rem .7rem; border: 1px solid var(--warn); border-radius: 6px; background: var(--warn-bg); color: var(--warn); font-size: .9rem; }
.omitted p { margin: .2rem 0; }
dialog { border: 1px solid var(--line); border-radius: 8px; max-width: 28rem; background: var(--card); color: var(--ink); }
dialog::backdrop { background: rgb(0 0 0 / 40%); }
dialog .buttons { display: flex; justify-content: flex-end; gap: .5rem; }
dialog.release { width: min(32rem, calc(100vw - 2rem)); }
dialog.release h2 { font-size: 1.15rem; margin: .2rem 0 .6rem; }
dialog.release label { display: block; font-weight: 600; margin: .6rem 0 .2rem; }
dialog.release input { box-sizing: border-box; width: 100%; padding: .35rem .6rem; border-radius: 6px; border: 1px solid var(--btn-line); background: var(--card); color: var(--ink); }
dialog.release input[aria-invalid=true] { border-color: var(--bad); box-shadow: 0 0 0 1px var(--bad); }
dialog.release .allow { color: var(--muted); font-size: .88rem; margin: .35rem 0; overflow-wrap: anywhere; }
dialog.release code { background: var(--code-bg); border-radius: 4px; padding: 0 .25rem; }
.release-error { color: var(--bad); margin: .4rem 0; overflow-wrap: anywhere; }
.release-error:empty { display: none; }
.keys { color: var(--muted); font-size: .85rem; text-align: center; margin: 0 0 1rem; }
kbd { font-family: inherit; border: 1px solid var(--line); border-bottom-width: 2px; border-radius: 4px; padding: 0 .3rem; background: var(--card); }

.signin { display: block; max-width: 40rem; margin: 3rem auto; background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 1rem 1.4rem; }
.signin h1 { font-size: 1.3rem; margin: .3rem 0 .8rem; }
.signin li { margin: .3rem 0; }
.signin code { white-space: nowrap; }
.signin code.wrap { white-space: normal; overflow-wrap: anywhere; }
.token-form { margin: 1rem 0 .5rem; }
.token-form label { display: block; font-weight: 600; margin-bottom: .3rem; }
.token-row { display: flex; gap: .5rem; flex-wrap: wrap; }
.token-row input { flex: 1 1 16rem; min-width: 0; padding: .4rem .6rem; border-radius: 6px; border: 1px solid var(--btn-line); background: var(--card); color: var(--ink); font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.problem { color: var(--danger); font-weight: 600; margin: .5rem 0 0; }
.fine { color: var(--muted); font-size: .88rem; }

@media (max-width: 759px) {
  .layout { padding: .5rem; gap: .5rem; }
  /* The list comes first on a phone; the clock and webhook panels fold below it. */
  .layout > main { order: 1; }
  .layout > .panels { order: 2; }
  body.reading .list, body.reading .panels { display: none; }
  body:not(.reading) .view { display: none; }
  .keys { display: none; }
  /* The bar's first line: the name, the live state and the theme; the search below. */
  .bar { padding: .5rem .6rem; }
  .bar h1 { flex: 1; order: -2; }
  .bar .live, .bar .theme { order: -1; }
  /* The box and its operators on a line of their own, the workspace menu and the button below. */
  .bar input[type=search] { flex-basis: 15rem; }
  .bar #workspace { flex: 1 1 auto; max-width: none; }
  .bar select { max-width: 9.5rem; }
  .signin { margin: 1rem .5rem; padding: .8rem 1rem; }
}
@media (min-width: 760px) {
  main { grid-template-columns: minmax(300px, 2fr) 3fr; align-items: start; }
  .back { display: none; }
  .list { position: sticky; top: 1rem; max-height: calc(100vh - 2rem); overflow: auto; }
}
@media (min-width: 1280px) {
  .layout { grid-template-columns: 15rem 1fr; align-items: start; }
  .panels { flex-direction: column; position: sticky; top: 1rem; }
  .panel { flex: none; }
}
`;

export const INBOX_CSS = BASE + MESSAGE_CSS + CHECKS_CSS;
