// The open message's part of the inbox stylesheet (inbox-style.ts holds the colours of both themes): its head and
// meta block, the preview of its HTML at a reader's width and in a reader's mode, the highlighted HTML source with
// line numbers, the header fields, the text, the attachments with thumbnails, and the events.
export const MESSAGE_CSS = `
.view-head h2 { font-size: 1.1rem; margin: 0; flex: 1 1 14rem; overflow-wrap: anywhere; }
.view-head .actions { display: flex; gap: .4rem; flex-wrap: wrap; }
.back { display: inline-block; }
.meta { display: grid; grid-template-columns: max-content 1fr; gap: .2rem .8rem; margin: 0; padding: .7rem .8rem; border-bottom: 1px solid var(--line); }
.meta dt { color: var(--muted); }
.meta dd { margin: 0; overflow-wrap: anywhere; min-width: 0; }
.meta .quiet { color: var(--muted); }
[role=tablist] { display: flex; gap: .2rem; padding: .5rem .8rem 0; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
[role=tab] { border: 1px solid transparent; border-bottom: 0; border-radius: 6px 6px 0 0; background: none; padding: .4rem .8rem; color: var(--muted); }
[role=tab][aria-selected=true] { border-color: var(--line); background: var(--card); color: var(--ink); font-weight: 600; margin-bottom: -1px; }
[role=tabpanel] { padding: .8rem; min-width: 0; }

/* The HTML as a reader sees it: a width (phone, tablet, the panel's), a mode (light, dark, inverted), and the frame
   as tall as the message, so the page scrolls, not the frame. */
.preview-bar { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; margin: 0 0 .6rem; }
.seg { display: inline-flex; border: 1px solid var(--btn-line); border-radius: 6px; overflow: hidden; }
.seg button { border: 0; border-radius: 0; padding: .25rem .6rem; font-size: .85rem; background: var(--card); }
.seg button + button { border-left: 1px solid var(--btn-line); }
.seg button[aria-pressed=true] { background: var(--accent); color: var(--on-accent); font-weight: 600; }
.remote { display: flex; gap: .6rem; align-items: center; flex-wrap: wrap; margin: 0 0 .6rem; color: var(--muted); }
.preview-note { margin: 0 0 .6rem; color: var(--muted); font-size: .88rem; }
.stage { overflow-x: auto; border: 1px solid var(--line); border-radius: 6px; }
.stage:not([data-width=full]) { background: var(--stage); padding: .6rem; }
/* content-box: the height set is the document's, borders aside. */
.frame { display: block; box-sizing: content-box; width: 100%; height: 320px; border: 0; background: #fff; color-scheme: light; margin: 0 auto; }
.stage[data-width=phone] .frame { width: 375px; }
.stage[data-width=tablet] .frame { width: 768px; }

/* The HTML source: line numbers in a gutter (a click marks the line), long lines wrapped, tokens coloured. */
.source { background: var(--code-bg); border: 1px solid var(--line); border-radius: 6px; padding: .4rem 0; max-height: 75vh; overflow: auto;
  font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .82rem; line-height: 1.5; }
.source .ln { display: grid; grid-template-columns: var(--gutter, 4ch) minmax(0, 1fr); }
.source .n { text-align: right; padding: 0 .6rem 0 .3rem; color: var(--muted); user-select: none; cursor: pointer; border-right: 1px solid var(--line); }
.source .n:hover { color: var(--ink); }
.source .c { padding: 0 .7rem; white-space: pre-wrap; overflow-wrap: anywhere; min-width: 0; }
.source .ln.hl { background: var(--hl); }
.source .ln.hl .n { color: var(--ink); font-weight: 700; }
.t-tag { color: var(--syn-tag); }
.t-attr { color: var(--syn-attr); }
.t-val { color: var(--syn-val); }
.t-comment { color: var(--syn-comment); font-style: italic; }
.t-punct { color: var(--syn-punct); }
.t-entity { color: var(--syn-entity); }
.t-at { color: var(--syn-at); }
.t-prop { color: var(--syn-tag); }
.source-note { color: var(--muted); font-size: .88rem; margin: .4rem 0 0; }

pre.body, pre.raw { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; max-height: 70vh; overflow: auto; }
pre.body a { overflow-wrap: anywhere; }

/* Header fields: names beside values (above them on a phone); technical values in monospace; every value wraps,
   a long DKIM signature included. */
.headers { width: 100%; border-collapse: collapse; table-layout: fixed; }
.headers th, .headers td { text-align: left; vertical-align: top; padding: .3rem .4rem; border-bottom: 1px solid var(--line); }
.headers th { width: 11rem; font-weight: 600; overflow-wrap: anywhere; }
.headers td { overflow-wrap: anywhere; word-break: break-word; white-space: pre-wrap; }
.headers td.mono { font-size: .8rem; line-height: 1.5; word-break: break-all; }

.section .atts { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: .6rem; }
.att { border: 1px solid var(--line); border-radius: 6px; padding: .4rem .5rem; min-width: 0; flex: 1 1 9rem; max-width: 14rem; }
.att a { overflow-wrap: anywhere; }
.att .about { display: block; color: var(--muted); font-size: .82rem; }
.thumb { display: block; margin: 0 0 .35rem; }
.thumb img { display: block; width: 100%; height: 6rem; object-fit: scale-down; background: var(--code-bg); border-radius: 4px; }

.section { padding: .7rem .8rem; border-top: 1px solid var(--line); }
.section h3 { font-size: .95rem; margin: 0 0 .4rem; }
.section ul, .section ol { margin: 0; padding-left: 1.2rem; }
.timeline li { margin: .2rem 0; }
.timeline time { font-variant-numeric: tabular-nums; color: var(--muted); }
.timeline .detail { color: var(--muted); font-size: .88rem; overflow-wrap: anywhere; }
.section .deliveries { list-style: none; margin: .2rem 0 .4rem; padding: 0 0 0 .8rem; border-left: 2px solid var(--line); }
.section .deliveries .attempts { padding: 0; }
.deliveries .nth { display: block; font-size: .82rem; color: var(--muted); }
.dkim-pass { color: var(--ok); font-weight: 600; }
.dkim-fail { color: var(--danger); font-weight: 600; }

@media (max-width: 759px) {
  .meta { gap: .15rem .6rem; font-size: .92rem; }
  .headers, .headers tbody, .headers tr, .headers th, .headers td { display: block; width: auto; }
  .headers th { border-bottom: 0; padding-bottom: 0; }
  [role=tabpanel] { padding: .6rem .5rem; }
}
`;
