// The inbox page's stylesheet (served as /inbox.css). Colours keep a contrast of at least 4.5:1 with their
// background; the layout is one column up to 760 px wide (the sandbox panels below the list there), list and
// message side by side above, and the sandbox panels in a column of their own from 1280 px.
export const INBOX_CSS = `
:root {
  --ink: #1b2230; --muted: #555f6e; --line: #d9dde3; --bg: #f5f6f8; --card: #fff; --accent: #1f4fc2;
  --focus: #b45309; --danger: #a1161b; --sel: #e8effc; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif;
  color: var(--ink); background: var(--bg);
}
* { box-sizing: border-box; }
[hidden] { display: none !important; } /* also where a rule of ours sets display */
body { margin: 0; min-width: 320px; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 1px; }
button, input, select { font: inherit; color: inherit; }
button, .button {
  border: 1px solid #8a93a1; background: var(--card); border-radius: 6px; padding: .35rem .7rem; cursor: pointer;
  text-decoration: none; display: inline-block; line-height: 1.3;
}
button:hover, .button:hover { background: #eef1f5; }
button:disabled { color: #6b7280; border-color: #c3c8cf; cursor: default; background: var(--card); }
button.danger { color: var(--danger); border-color: var(--danger); }
.vh { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.skip { position: absolute; left: -999px; top: 0; background: var(--card); padding: .5rem; z-index: 10; }
.skip:focus { left: .5rem; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .87rem; }
h1, h2, h3 { line-height: 1.25; }

.bar { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; padding: .6rem 1rem; background: #1b2230; color: #fff; }
.bar h1 { font-size: 1.05rem; margin: 0; white-space: nowrap; }
.bar form { display: flex; flex: 1 1 26rem; gap: .4rem; flex-wrap: wrap; }
.bar input[type=search] { flex: 1 1 12rem; min-width: 0; padding: .35rem .6rem; border-radius: 6px; border: 1px solid #8a93a1; background: #fff; color: var(--ink); }
.bar select { padding: .35rem; border-radius: 6px; border: 1px solid #8a93a1; background: #fff; color: var(--ink); max-width: 14rem; }
.bar button { background: #2c3547; color: #fff; border-color: #8a93a1; }
.bar button:hover { background: #3a4559; }
.bar .live { font-size: .85rem; color: #d5dae2; }
.bar :focus-visible { outline-color: #fbbf24; }

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
.rows { list-style: none; margin: 0; padding: 0; }
.rows li { border-bottom: 1px solid var(--line); }
.row { display: grid; grid-template-columns: 1fr auto; gap: .1rem .6rem; padding: .55rem .8rem; color: inherit; text-decoration: none; }
.row:hover { background: #f2f4f7; }
.row:focus-visible { outline-offset: -3px; } /* inside the row: the scrolling list would clip it */
.row[aria-current=true] { background: var(--sel); }
.row .who { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.row .when { color: var(--muted); font-size: .85rem; white-space: nowrap; text-align: right; }
.row .subject { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.row .facts { display: flex; gap: .4rem; align-items: center; justify-content: flex-end; font-size: .8rem; color: var(--muted); white-space: nowrap; }
.row .preview { grid-column: 1 / -1; color: var(--muted); font-size: .88rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.row.unread .who, .row.unread .subject { font-weight: 700; }
.row .dot { display: inline-block; width: .55rem; height: .55rem; border-radius: 50%; background: var(--accent); margin-right: .35rem; vertical-align: middle; }
.empty { padding: 1.5rem .8rem; color: var(--muted); }
.first-send p { margin: 0 0 .5rem; }
.first-send strong { color: var(--ink); }
.first-send pre { margin: 0 0 .8rem; padding: .5rem .6rem; background: var(--bg); border: 1px solid var(--line); border-radius: 6px;
  color: var(--ink); white-space: pre-wrap; overflow-wrap: anywhere; user-select: all; }
.panel code { overflow-wrap: anywhere; }
.pager { display: flex; justify-content: space-between; gap: .5rem; padding: .6rem .8rem; }
.ws { color: var(--muted); }
.clip { width: .95rem; height: .95rem; vertical-align: -2px; fill: none; stroke: currentColor; stroke-width: 2; }

.badge { display: inline-block; font-size: .75rem; font-weight: 600; border-radius: 999px; padding: 0 .5rem; line-height: 1.5; background: #e6eefc; color: #1e4fb5; }
.badge.delivered { background: #e3f5e8; color: #0b6b2f; }
.badge.bounced, .badge.failed { background: #fde7e8; color: #a1161b; }
.badge.complained { background: #fff1dc; color: #8a4b00; }
.badge.suppressed, .badge.cancelled { background: #eef0f3; color: #454d5a; }
.badge.active { background: #e3f5e8; color: #0b6b2f; }
.badge.disabled_by_failures { background: #fde7e8; color: #a1161b; }
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
.result.ok { color: #0b6b2f; }
.result.failed { color: var(--danger); }
.attempts time { font-variant-numeric: tabular-nums; }

.view-head h2 { font-size: 1.1rem; margin: 0; flex: 1 1 14rem; overflow-wrap: anywhere; }
.view-head .actions { display: flex; gap: .4rem; flex-wrap: wrap; }
.back { display: inline-block; }
.meta { display: grid; grid-template-columns: max-content 1fr; gap: .2rem .8rem; margin: 0; padding: .7rem .8rem; border-bottom: 1px solid var(--line); }
.meta dt { color: var(--muted); }
.meta dd { margin: 0; overflow-wrap: anywhere; min-width: 0; }
[role=tablist] { display: flex; gap: .2rem; padding: .5rem .8rem 0; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
[role=tab] { border: 1px solid transparent; border-bottom: 0; border-radius: 6px 6px 0 0; background: none; padding: .4rem .8rem; color: var(--muted); }
[role=tab][aria-selected=true] { border-color: var(--line); background: var(--card); color: var(--ink); font-weight: 600; margin-bottom: -1px; }
[role=tabpanel] { padding: .8rem; min-width: 0; }
.frame { width: 100%; height: 70vh; min-height: 320px; border: 1px solid var(--line); border-radius: 6px; background: #fff; resize: vertical; }
.omitted { margin: .6rem .8rem; padding: .4rem .7rem; border: 1px solid #e9c46a; border-radius: 6px; background: #fff8e6; color: #5c4300; font-size: .9rem; }
.omitted p { margin: .2rem 0; }
.remote { display: flex; gap: .6rem; align-items: center; flex-wrap: wrap; margin: 0 0 .6rem; color: var(--muted); }
pre.body, pre.raw { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; max-height: 70vh; overflow: auto; }
.headers { width: 100%; border-collapse: collapse; table-layout: fixed; }
.headers th, .headers td { text-align: left; vertical-align: top; padding: .25rem .4rem; border-bottom: 1px solid var(--line); }
.headers th { width: 11rem; font-weight: 600; overflow-wrap: anywhere; }
.headers td { overflow-wrap: anywhere; word-break: break-word; white-space: pre-wrap; }
.section { padding: .7rem .8rem; border-top: 1px solid var(--line); }
.section h3 { font-size: .95rem; margin: 0 0 .4rem; }
.section ul, .section ol { margin: 0; padding-left: 1.2rem; }
.timeline li { margin: .2rem 0; }
.timeline time { font-variant-numeric: tabular-nums; color: var(--muted); }
.timeline .detail { color: var(--muted); font-size: .88rem; overflow-wrap: anywhere; }
.section .deliveries { list-style: none; margin: .2rem 0 .4rem; padding: 0 0 0 .8rem; border-left: 2px solid var(--line); }
.section .deliveries .attempts { padding: 0; }
.deliveries .nth { display: block; font-size: .82rem; color: var(--muted); }
.dkim-pass { color: #0b6b2f; font-weight: 600; }
.dkim-fail { color: var(--danger); font-weight: 600; }
dialog { border: 1px solid var(--line); border-radius: 8px; max-width: 28rem; }
dialog::backdrop { background: rgb(0 0 0 / 40%); }
dialog .buttons { display: flex; justify-content: flex-end; gap: .5rem; }
.keys { color: var(--muted); font-size: .85rem; text-align: center; margin: 0 0 1rem; }
kbd { font-family: inherit; border: 1px solid var(--line); border-bottom-width: 2px; border-radius: 4px; padding: 0 .3rem; background: var(--card); }
.signin { max-width: 36rem; margin: 3rem auto; background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 1rem 1.4rem; }

@media (max-width: 759px) {
  .layout { padding: .5rem; gap: .5rem; }
  /* The list comes first on a phone; the clock and webhook panels fold below it. */
  .layout > main { order: 1; }
  .layout > .panels { order: 2; }
  body.reading .list, body.reading .panels { display: none; }
  body:not(.reading) .view { display: none; }
  .row .preview { white-space: normal; display: -webkit-box; -webkit-line-clamp: 2; -webkit-box-orient: vertical; }
  .meta { grid-template-columns: 1fr; }
  .meta dt { margin-top: .3rem; }
  .headers th { width: 7rem; }
  .keys { display: none; }
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
