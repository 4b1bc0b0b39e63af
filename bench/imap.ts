// bench/imap: a mail client reading a whole mailbox over IMAP. BENCH_MESSAGES (default 1,000) messages of about 20 KB
// are caught by the sink (over SMTP, logged in with the seeded API key, so they are its workspace's INBOX); then
// imapflow logs in, selects INBOX, FETCHes 1:* (UID FLAGS RFC822.SIZE) — what a client lists first — and then every
// message's source (BODY.PEEK[]). Printed: the time of each, and the server's resident memory before and at its peak
// while they ran (sampled every 20 ms from /proc): a session holds the mailbox as UIDs and read marks, and a FETCH of
// bodies reads one source at a time as the client takes them, so the peak should grow by little, not by the mailbox.
import { ImapFlow } from 'imapflow';
import { cpuSeconds, sampleRss, sinkTransport, spawnServe, speedLine } from './common.js';

const COUNT = Number(process.env.BENCH_MESSAGES ?? 1000);

const svc = await spawnServe(['--max-messages', 'off']);
try {
  const ready = svc.ready;
  if (!ready.imap) throw new Error('svc serve reports no IMAP listener (ready.imap is null)');
  const imapPort = Number(new URL(ready.imap).port);

  const text = Array.from(
    { length: 300 },
    (_, i) => `line ${i} of a receipt with its items and totals, and more.\n`,
  ).join('');
  const transport = await sinkTransport(svc);
  const started = Date.now();
  const sends: Promise<unknown>[] = [];
  for (let i = 0; i < COUNT; i++) {
    sends.push(
      transport.sendMail({ from: 'shop@example.test', to: `customer${i}@example.test`, subject: `Receipt ${i}`, text }),
    );
  }
  await Promise.all(sends);
  transport.close();
  console.log(`caught ${COUNT} messages in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  const rss = await sampleRss(svc.proc.pid!);
  const client = new ImapFlow({
    host: '127.0.0.1',
    port: imapPort,
    secure: false,
    doSTARTTLS: false,
    auth: { user: 'bench', pass: svc.ready.seed.api_key_test! },
    logger: false,
  });
  const t0 = performance.now();
  await client.connect();
  const box = await client.mailboxOpen('INBOX');
  const t1 = performance.now();
  let listed = 0;
  for await (const m of client.fetch('1:*', { uid: true, flags: true, size: true })) if (m.size) listed++;
  const t2 = performance.now();
  const cpu0 = await cpuSeconds(svc.proc.pid!);
  let bytes = 0;
  let read = 0;
  for await (const m of client.fetch('1:*', { source: true })) {
    bytes += m.source?.length ?? 0;
    read++;
  }
  const t3 = performance.now();
  const cpu = (await cpuSeconds(svc.proc.pid!)) - cpu0;
  await client.logout();
  const { before, peak } = await rss.stop();
  if (box.exists !== COUNT || listed !== COUNT || read !== COUNT) {
    throw new Error(`INBOX holds ${box.exists}, listed ${listed}, read ${read}; expected ${COUNT}`);
  }
  const mb = bytes / 1024 / 1024;
  console.log(`imap: LOGIN + SELECT of ${COUNT} messages in ${(t1 - t0).toFixed(0)} ms`);
  console.log(`imap: FETCH 1:* (UID FLAGS RFC822.SIZE) in ${(t2 - t1).toFixed(0)} ms`);
  console.log(
    `imap: FETCH 1:* BODY.PEEK[] (${mb.toFixed(1)} MB) in ${((t3 - t2) / 1000).toFixed(2)} s: ` +
      `${(COUNT / ((t3 - t2) / 1000)).toFixed(0)} messages/s, ${(mb / ((t3 - t2) / 1000)).toFixed(1)} MB/s; ` +
      `server CPU ${cpu.toFixed(2)} s (the rest is the client's)`,
  );
  console.log(
    `server RSS: ${before.toFixed(0)} MB before, peak ${peak.toFixed(0)} MB while reading (+${(peak - before).toFixed(0)} MB)`,
  );
  console.log(await speedLine());
} finally {
  await svc.stop();
}
