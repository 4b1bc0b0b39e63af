// bench/checks: what checking a caught message costs. First what a test pays: svc-mail/testing's `inbox.check()` on a
// typical transactional mail, the first time in a fresh process (the sandbox started, the message sent, waited for,
// then checked at once, or after the sandbox has idled a second, as a test started in a beforeAll would) and the next
// times, beside the target (≤ 300 ms the first time, on an idle machine). Then a 100 KB newsletter
// (fixtures/checks/newsletter.html, its products repeated) through the checks that need no network — html-compatibility,
// content, accessibility and html-validate's part of them, the URLs for the links check — as `svc serve` runs them (on
// two threads side by side) beside the target (≤ 200 ms a message, warm; the first run, which starts the threads and
// loads caniemail's data and html-validate, shown apart), then one after the other in this thread, part by part. Then
// the built server in this process, reports made for ten such newsletters while a probe asks GET /livez every 5 ms: how
// long the event loop stalled and the probe waited, with the offline checks on their threads and on the event loop
// (after three reports that start the threads and warm them up). `BENCH_ROUNDS` (default 20) runs of each timed part;
// `BENCH_FRESH` (default 10) fresh processes for each first check.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const MESSAGES = 10;
/** Reports made before the timed ones: the first starts the threads and loads the checks, the next warm them up. */
const WARM = 3;
const TARGET_MS = 200;
const FRESH = Number(process.env.BENCH_FRESH ?? 10);
const FIRST_TARGET_MS = 300;
const TESTING = fileURLToPath(new URL('../dist/testing/index.js', import.meta.url));

const dist = (path: string) => import(`../dist/server/${path}` as string);
const { runOffline } = (await dist(
  'checks/offline-checks.js',
)) as typeof import('../src/server/checks/offline-checks.js');
const { createOfflineRunner } = (await dist(
  'checks/offline-runner.js',
)) as typeof import('../src/server/checks/offline-runner.js');
const { parseMarkup } = (await dist('checks/markup.js')) as typeof import('../src/server/checks/markup.js');
const { htmlCompatibility } = (await dist(
  'checks/html-compatibility.js',
)) as typeof import('../src/server/checks/html-compatibility.js');
const { validateHtml, validation } = (await dist(
  'checks/validator.js',
)) as typeof import('../src/server/checks/validator.js');
const { startServer } = (await dist('index.js')) as typeof import('../src/server/index.js');
const { createLogger } = (await import('../dist/lib/log.js' as string)) as typeof import('../src/lib/log.js');

/** The fixture newsletter, its products section repeated until the HTML is 100 KB. */
function newsletter(): string {
  const html = readFileSync(new URL('../fixtures/checks/newsletter.html', import.meta.url), 'utf8');
  const section = /<section class="products">[\s\S]*?<\/section>/.exec(html)![0];
  let products = section;
  while (html.length - section.length + products.length < 100 * 1024) products += `\n${section}`;
  return html.replace(section, products);
}
const html = newsletter();
const text = readFileSync(new URL('../fixtures/checks/newsletter.txt', import.meta.url), 'utf8');
const input = {
  html,
  sentHtmlBytes: Buffer.byteLength(html),
  text,
  subject: 'Spring has arrived',
  from: 'The Shop <news@example.test>',
  headers: [],
};

const time = (fn: () => unknown) => {
  const t = performance.now();
  fn();
  return performance.now() - t;
};

/**
 * One fresh process, as a test worker is: a sandbox started, idle for `idleMs`, then a transactional mail (a code, a
 * button, a logo; its links on a host that resolves nowhere, as an app's test mail has) sent, waited for and checked,
 * and three more after it.
 */
const firstCheck = (idleMs: number) => `
const { startSandbox } = await import(${JSON.stringify(TESTING)});
const sb = await startSandbox();
await new Promise((r) => setTimeout(r, ${idleMs}));
const html = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Confirm your address</title>' +
  '<style>.button { background: #0a66c2; color: #ffffff; padding: 12px 20px; border-radius: 6px; }</style></head><body>' +
  '<table role="presentation" width="100%"><tr><td><img src="https://shop.example.test/logo.png" alt="The Shop" width="120">' +
  '<h1>Welcome, Ada</h1><p>Your code is <strong>482913</strong>.</p>' +
  '<p><a class="button" href="https://shop.example.test/confirm?c=482913">Confirm your address</a></p>' +
  '<p><a href="https://shop.example.test/unsubscribe">Unsubscribe</a></p></td></tr></table></body></html>';
const times = [];
let sendAndWait = 0;
for (let i = 0; i < 4; i++) {
  const to = 'ada' + i + '@example.org';
  const s = performance.now();
  await sb.client.call('sendEmail', { body: { from: 'The Shop <hello@example.test>', to, subject: 'Confirm your address',
    html, text: 'Welcome, Ada. Your code is 482913. Confirm: https://shop.example.test/confirm?c=482913' } });
  const m = await sb.inbox.waitFor({ to });
  if (i === 0) sendAndWait = performance.now() - s;
  const t = performance.now();
  await sb.inbox.check(m);
  times.push(performance.now() - t);
}
await sb.close();
console.log(JSON.stringify({ times, sendAndWait }));
`;

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const median = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)]!;
const p95 = (xs: number[]) => sorted(xs)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.95) - 1)]!;
const ms = (x: number) => `${x.toFixed(0)} ms`;

console.log(
  `bench/checks  (svc-mail/testing's inbox.check() on a transactional mail, ${FRESH} fresh processes a case; Node ${process.version})`,
);
// A file, not `node --input-type=module -e`: a worker thread takes the flags of its process, and no file loads under
// that one.
const scripts = mkdtempSync(join(tmpdir(), 'svc-bench-checks-'));
const script = (idleMs: number) => {
  const path = join(scripts, `first-check-${idleMs}.mjs`);
  writeFileSync(path, firstCheck(idleMs));
  return path;
};
for (const idleMs of [0, 1000]) {
  const runs: { times: number[]; sendAndWait: number }[] = [];
  for (let i = 0; i < FRESH; i++) {
    // No NODE_EXTRA_CA_CERTS: where it is set, every Node process parses that many certificates first.
    const { NODE_EXTRA_CA_CERTS: _, ...env } = process.env;
    const r = spawnSync(process.execPath, [script(idleMs)], { encoding: 'utf8', env });
    if (r.status !== 0) throw new Error(`a fresh process failed: ${r.stderr}`);
    runs.push(JSON.parse(r.stdout.trim().split('\n').at(-1)!));
  }
  const first = runs.map((r) => r.times[0]!);
  console.log(
    `  ${idleMs ? `sent ${idleMs / 1000} s after the start` : 'sent at once after the start'}: the first check median ` +
      `${ms(median(first))}, max ${ms(Math.max(...first))}   (target ≤ ${FIRST_TARGET_MS} ms); the next ones median ` +
      `${ms(median(runs.flatMap((r) => r.times.slice(1))))}; the first message's send and wait median ` +
      `${ms(median(runs.map((r) => r.sendAndWait)))}`,
  );
}
rmSync(scripts, { recursive: true });

console.log(
  `bench/checks  (a ${Math.round(Buffer.byteLength(html) / 1024)} KB newsletter, ${(html.match(/<[a-z]/gi) ?? []).length} elements; Node ${process.version})`,
);
const log = createLogger({ silent: true });
const lanes = createOfflineRunner({ thread: true, log });
const wall = async (fn: () => Promise<unknown>) => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};
const first = await wall(() => lanes.run(input));
console.log(`  first run (starts the threads, loads caniemail's data and html-validate): ${ms(first)}`);
for (let i = 1; i < WARM; i++) await lanes.run(input);
const side: number[] = [];
for (let i = 0; i < ROUNDS; i++) side.push(await wall(() => lanes.run(input)));
await lanes.close();
console.log(
  `  the checks that need no network, on their two threads as svc serve runs them, ${ROUNDS} runs: ` +
    `median ${ms(median(side))}, p95 ${ms(p95(side))}   (target ≤ ${TARGET_MS} ms)`,
);
const both = () => {
  runOffline(input);
  validation(html);
};
both();
const parts = { all: [] as number[], parse: [] as number[], compatibility: [] as number[], validate: [] as number[] };
for (let i = 0; i < ROUNDS; i++) {
  parts.all.push(time(both));
  let m!: ReturnType<typeof parseMarkup>;
  parts.parse.push(time(() => (m = parseMarkup(html))));
  parts.compatibility.push(time(() => htmlCompatibility(m)));
  parts.validate.push(time(() => validateHtml(html)));
}
console.log(
  `  one after the other in this thread: median ${ms(median(parts.all))}; of which parsing ${ms(median(parts.parse))}, ` +
    `html-compatibility (caniemail) ${ms(median(parts.compatibility))}, html-validate ${ms(median(parts.validate))}`,
);

/** Reports for MESSAGES newsletters on a server in this process, while a probe asks /livez every 5 ms. */
async function responsiveness(thread: boolean) {
  const server = await startServer({
    memory: true,
    port: 0,
    smtpPort: 0,
    submissionPort: 0,
    submissionsPort: 0,
    pop3Port: 0,
    imapPort: 0,
    clock: 'manual',
    checksThread: thread,
    log,
  });
  try {
    const admin = { authorization: `Bearer ${server.adminToken}` };
    const ids: string[] = [];
    for (let i = 0; i < MESSAGES + WARM; i++) {
      const r = await fetch(`${server.api}/emails`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.ready.seed!.api_key_test}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          ...input,
          headers: undefined,
          sentHtmlBytes: undefined,
          to: 'ada@example.org',
          subject: `n${i}`,
        }),
      });
      if (r.status !== 202) throw new Error(`send: ${r.status} ${await r.text()}`);
    }
    await server.scheduler.runDue();
    const list = (await (await fetch(`${server.origin}/sandbox/messages?limit=100`, { headers: admin })).json()) as {
      data: { id: string }[];
    };
    ids.push(...list.data.map((m) => m.id));
    const check = async (id: string) => {
      const r = await fetch(`${server.origin}/sandbox/messages/${id}/checks`, { headers: admin });
      if (r.status !== 200) throw new Error(`checks: ${r.status} ${await r.text()}`);
      await r.json();
    };
    for (const id of ids.splice(0, WARM)) await check(id);
    const delay = monitorEventLoopDelay({ resolution: 1 });
    const waits: number[] = [];
    let probing = true;
    const probe = (async () => {
      while (probing) {
        const t = performance.now();
        await (await fetch(`${server.origin}/livez`)).text();
        waits.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    delay.enable();
    const t = performance.now();
    for (const id of ids) await check(id);
    const elapsed = performance.now() - t;
    delay.disable();
    probing = false;
    await probe;
    return { perReport: elapsed / ids.length, stall: delay.max / 1e6, wait: Math.max(...waits), median: median(waits) };
  } finally {
    await server.close();
  }
}

for (const thread of [true, false]) {
  const r = await responsiveness(thread);
  console.log(
    `  ${MESSAGES} reports on a server, offline checks ${thread ? 'on their threads (svc serve)' : 'on the event loop    '}: ` +
      `${ms(r.perReport)} a report; event loop's longest stall ${ms(r.stall)}; GET /livez meanwhile median ${ms(r.median)}, max ${ms(r.wait)}`,
  );
}
