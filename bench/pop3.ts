// bench/pop3: a mail client downloading a whole maildrop over POP3. BENCH_MESSAGES (default 1,000) messages of about
// 20 KB are caught by the sink (over SMTP, logged in with the seeded API key, so they are its workspace's maildrop),
// BENCH_LARGE of them (default 5) of 5 MB; then Python's poplib logs in and RETRs every one, as a client without
// "leave messages on server" does before its DELEs. Printed: the time and rate of the download, and the server's
// resident memory before it and at its peak while it ran (sampled every 20 ms from /proc): the maildrop is listed at
// login as entries alone, and a message's bytes are read only for its RETR, so the peak should grow by about one
// message, not by the maildrop.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sampleRss, sinkTransport, spawnServe, speedLine } from './common.js';

const COUNT = Number(process.env.BENCH_MESSAGES ?? 1000);
const LARGE = Number(process.env.BENCH_LARGE ?? 5);
const LARGE_BYTES = 5 * 1024 * 1024;

const run = promisify(execFile);
const svc = await spawnServe(['--max-messages', 'off']);
try {
  if (!svc.ready.pop3) throw new Error('svc serve reports no POP3 listener (ready.pop3 is null)');
  const popPort = Number(new URL(svc.ready.pop3).port);

  // A text line a line: about 20 KB, some lines starting with a dot (stuffed on the way out).
  const line = (i: number) => `${i % 10 === 0 ? '.' : ''}line ${i} of a receipt with its items and totals, and more.\n`;
  const text = Array.from({ length: 300 }, (_, i) => line(i)).join('');
  const large = Buffer.alloc(Math.floor(LARGE_BYTES * 0.74), 7); // base64 makes it LARGE_BYTES
  const transport = await sinkTransport(svc);
  const started = Date.now();
  const sends: Promise<unknown>[] = [];
  for (let i = 0; i < COUNT; i++) {
    const big = i < LARGE;
    sends.push(
      transport.sendMail({
        from: 'shop@example.test',
        to: `customer${i}@example.test`,
        subject: `Receipt ${i}`,
        text,
        attachments: big ? [{ filename: 'statement.pdf', content: large }] : undefined,
      }),
    );
  }
  await Promise.all(sends);
  transport.close();
  console.log(`caught ${COUNT} messages (${LARGE} of 5 MB) in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  const rss = await sampleRss(svc.proc.pid!);
  const { stdout } = await run(
    'python3',
    [
      '-c',
      `
import json, os, poplib, time
p = poplib.POP3('127.0.0.1', int(os.environ['PORT']), timeout=60)
t0 = time.monotonic()
p.user('bench'); p.pass_(os.environ['KEY'])
count, size = p.stat()
got = 0
for i in range(1, count + 1):
    got += p.retr(i)[2]
p.quit()
print(json.dumps({'count': count, 'size': size, 'got': got, 'seconds': time.monotonic() - t0}))
`,
    ],
    {
      env: { PATH: process.env.PATH!, PORT: String(popPort), KEY: svc.ready.seed.api_key_test! },
      maxBuffer: 1024 * 1024,
    },
  );
  const { before, peak } = await rss.stop();
  const r = JSON.parse(stdout) as { count: number; size: number; got: number; seconds: number };
  if (r.count !== COUNT) throw new Error(`the maildrop holds ${r.count} messages, not ${COUNT}`);
  const mb = r.size / 1024 / 1024;
  console.log(
    `pop3: RETR of ${r.count} messages (${mb.toFixed(1)} MB) by Python's poplib in ${r.seconds.toFixed(2)} s: ` +
      `${(r.count / r.seconds).toFixed(0)} messages/s, ${(mb / r.seconds).toFixed(1)} MB/s`,
  );
  console.log(
    `server RSS: ${before.toFixed(0)} MB before the download, peak ${peak.toFixed(0)} MB during it (+${(peak - before).toFixed(0)} MB)`,
  );
  console.log(await speedLine());
} finally {
  await svc.stop();
}
