// The floor for bench/smtp-ingest: svc's SMTP sink with nothing behind it. The same library (smtp-server) with the
// sink's own options and connections (the path svc takes, src/server/inbound/seams/smtp-server.ts: greeted at once,
// pipelined replies in one write, unless SVC_STOCK_SEAMS is set), taking each message into one Buffer as the sink does
// and answering 250 at once: no parse, no store, no search entry. The gap between it and svc is what catching a
// message costs; the gap between it and postfix's smtp-sink is the library's own.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { gather } from '../src/lib/gather.js';
import { silentLogger } from '../src/lib/log.js';
import { useConnections } from '../src/server/inbound/seams/smtp-server.js';
import { sinkServerOptions } from '../src/server/inbound/sink.js';

const server = new SMTPServer({
  ...sinkServerOptions(),
  onConnect: (_session, callback) => callback(),
  onMailFrom: (_address, _session, callback) => callback(),
  onRcptTo: (_address, _session, callback) => callback(),
  onData(stream, _session, callback) {
    const raw = gather(0);
    stream.on('data', (chunk: Buffer) => raw.add(chunk));
    stream.on('end', () => {
      raw.bytes();
      callback(null, 'Caught');
    });
  },
});
await useConnections(server, silentLogger);
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () =>
  console.log(JSON.stringify({ port: (server.server.address() as AddressInfo).port })),
);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
