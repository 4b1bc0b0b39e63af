// The Checks tab's part of the inbox stylesheet (inbox-style.ts holds the colours of both themes): the summary (score,
// counts, each check's status), the clients' support as bars, the findings, the links, and the count on the tab. The
// tab lays itself out by its own width (a container query), as the message panel is narrow beside the list, and wide
// alone.
export const CHECKS_CSS = `
.tab-count { display: inline-block; margin-left: .35rem; min-width: 1.3rem; padding: 0 .35rem; border-radius: 999px;
  font-size: .72rem; font-weight: 700; line-height: 1.5; text-align: center; vertical-align: 1px;
  background: var(--ok-bg); color: var(--ok); }
.tab-count.error { background: var(--bad-bg); color: var(--bad); }
.tab-count.warning { background: var(--warn-bg); color: var(--warn); }

.checks { display: grid; gap: .9rem; container-type: inline-size; min-width: 0; }
.checks p { margin: 0; }
.checks .muted { color: var(--muted); font-size: .85rem; }
.checks code { overflow-wrap: anywhere; }
.ck-progress { display: grid; gap: .5rem; padding: 1rem 0; }
.ck-progress progress { width: 100%; max-width: 24rem; height: .5rem; accent-color: var(--accent); }
.ck-failed { color: var(--danger); font-weight: 600; }

/* A status: a mark and a word, coloured; never the colour alone. */
.sev { display: inline-flex; align-items: center; gap: .3rem; justify-self: start; border-radius: 999px; padding: 0 .5rem;
  align-self: start; font-size: .78rem; font-weight: 600; line-height: 1.6; white-space: nowrap; background: var(--none-bg);
  color: var(--none); }
.sev.error { background: var(--bad-bg); color: var(--bad); }
.sev.warning { background: var(--warn-bg); color: var(--warn); }
.sev.notice { background: var(--info-bg); color: var(--info); }
.sev.ok { background: var(--ok-bg); color: var(--ok); }
.mark { font-weight: 700; min-width: .7em; text-align: center; }

.ck-summary { display: grid; grid-template-columns: auto minmax(0, 1fr); gap: .6rem 1.2rem; align-items: center;
  padding: .8rem .9rem; border: 1px solid var(--line); border-radius: 8px; background: var(--code-bg); }
.ck-score { display: grid; gap: .3rem; width: 6.5rem; }
.ck-score .num { font-size: 2.1rem; font-weight: 700; line-height: 1; font-variant-numeric: tabular-nums; }
.ck-score[data-band=good] .num { color: var(--ok); }
.ck-score[data-band=warn] .num { color: var(--warn); }
.ck-score[data-band=bad] .num { color: var(--bad); }
.ck-score .of { font-size: .9rem; font-weight: 400; color: var(--muted); margin-left: .15rem; }
.ck-score .label { font-size: .8rem; color: var(--muted); }
.ck-side { display: grid; gap: .45rem; min-width: 0; }
.ck-counts { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: .35rem; }
.count { display: inline-flex; align-items: baseline; gap: .3rem; border-radius: 999px; padding: .05rem .65rem;
  font-size: .88rem; background: var(--none-bg); color: var(--none); }
.count.error { background: var(--bad-bg); color: var(--bad); }
.count.warning { background: var(--warn-bg); color: var(--warn); }
.count.notice { background: var(--info-bg); color: var(--info); }
.count[data-zero] { background: var(--none-bg); color: var(--none); }
.ck-when { display: flex; flex-wrap: wrap; align-items: center; gap: .3rem .5rem; font-size: .85rem; color: var(--muted); }
.ck-when button[aria-disabled=true] { color: var(--disabled); border-color: var(--disabled-line); cursor: progress; }
.ck-when progress { width: 5rem; height: .4rem; accent-color: var(--accent); }
.ck-data { grid-column: 1 / -1; font-size: .8rem; color: var(--muted); }

/* One row a check, its status, name and note in columns shared by every row (a subgrid). */
.ck-list { list-style: none; margin: 0; padding: 0; border: 1px solid var(--line); border-radius: 8px; display: grid;
  grid-template-columns: max-content max-content minmax(0, 1fr); column-gap: .8rem; }
.ck-list li { display: grid; grid-column: 1 / -1; grid-template-columns: subgrid; row-gap: .15rem; align-items: baseline;
  padding: .4rem .75rem; }
.ck-list .name { white-space: nowrap; }
.ck-list li + li { border-top: 1px solid var(--line); }
.ck-list .name { font-weight: 600; color: var(--ink); text-decoration: underline dotted; text-underline-offset: 3px; }
.ck-list .name:hover { color: var(--accent); text-decoration-style: solid; }
.ck-list span.name { text-decoration: none; }
.ck-list .note { color: var(--muted); font-size: .86rem; overflow-wrap: break-word; min-width: 0; }

.ck-section { border-top: 1px solid var(--line); padding-top: .7rem; min-width: 0; }
.ck-group:focus { outline: none; }
.ck-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: .2rem .7rem; margin: 0 0 .4rem; }
.ck-head h3 { margin: 0; font-size: 1rem; }
.ck-head button { margin-left: auto; }

/* Each client's support of the features the message uses: a bar and its share, and its share of opened mail. */
.ck-clients { width: 100%; border-collapse: collapse; font-size: .88rem; }
.ck-clients th, .ck-clients td { padding: .22rem .4rem; text-align: left; border-bottom: 1px solid var(--line); }
.ck-clients thead th { font-size: .78rem; font-weight: 600; color: var(--muted); }
.ck-clients tbody th { font-weight: 400; overflow-wrap: anywhere; }
.ck-clients .bar-cell { width: 38%; }
.ck-clients .pct, .ck-clients .share, .ck-clients thead th:nth-child(n+3) { text-align: right; white-space: nowrap;
  font-variant-numeric: tabular-nums; }
.ck-clients .share { color: var(--muted); }
.ck-bar { display: block; height: .5rem; min-width: 3rem; border-radius: 999px; background: var(--line); overflow: hidden; }
.ck-bar .fill { display: block; height: 100%; border-radius: 999px; background: var(--ok); }
.ck-bar[data-band=warn] .fill { background: var(--warn); }
.ck-bar[data-band=bad] .fill { background: var(--bad); }

.findings { list-style: none; margin: 0; padding: 0; }
.finding { display: grid; grid-template-columns: 6.4rem minmax(0, 1fr); gap: .2rem .6rem; padding: .55rem 0;
  border-top: 1px solid var(--line); }
.ck-head + .findings > .finding:first-child { border-top: 0; }
.finding .sev { margin-top: .1rem; }
.f-body { display: grid; gap: .25rem; min-width: 0; }
/* A rule name moves to the next line whole rather than breaking at its hyphens. */
.f-rule { display: inline-block; max-width: 100%; font-size: .75rem; color: var(--muted); }
.f-detail { font-size: .88rem; overflow-wrap: anywhere; }
/* A long detail (caniemail's notes) shows three lines until asked for the rest. */
.f-detail.clamp { display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 3; overflow: hidden; }
.f-body > button.link { justify-self: start; font-size: .85rem; }
.f-clients { font-size: .85rem; color: var(--muted); }
.f-url { font-size: .88rem; }
.f-url > code { overflow-wrap: anywhere; }
.answer { font-weight: 600; margin-left: .4rem; white-space: nowrap; color: var(--none); }
.answer.s2 { color: var(--ok); }
.answer.s3 { color: var(--info); }
.answer.s4, .answer.s5 { color: var(--bad); }
.hops { list-style: none; margin: .15rem 0 0; padding: 0 0 0 .7rem; font-size: .85rem; }
.f-actions { display: flex; flex-wrap: wrap; align-items: center; gap: .4rem .8rem; }
.docs { font-size: .86rem; }
button.link { border: 0; padding: 0; background: none; color: var(--accent); text-decoration: underline; font-size: inherit; }
button.link:hover { background: none; }
.ck-more > summary { cursor: pointer; color: var(--accent); font-size: .88rem; padding: .35rem 0; }
.ck-links { list-style: none; margin: 0; padding: 0; font-size: .86rem; }
.ck-links li { display: flex; flex-wrap: wrap; align-items: baseline; gap: .15rem .6rem; padding: .35rem 0; border-top: 1px solid var(--line); }
.ck-links code { flex: 1 1 16rem; min-width: 0; }
.ck-links .about { color: var(--muted); }
.ck-links .answer { margin: 0; }

@container (max-width: 520px) {
  .ck-list { grid-template-columns: max-content minmax(0, 1fr); }
  .ck-list .note { grid-column: 2; }
  /* The status beside the title, the rest of the finding under both. */
  .finding { grid-template-columns: auto minmax(0, 1fr); }
  .finding .f-body { display: contents; }
  .finding .f-body > :not(.f-title) { grid-column: 1 / -1; }
  .ck-summary { gap: .6rem .9rem; padding: .7rem; }
  .ck-score { width: 5.2rem; }
  .ck-clients .bar-cell { width: 30%; }
}
`;
