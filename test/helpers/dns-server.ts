// A real DNS responder for tests: answers queries on loopback (UDP, and TCP on the same port for truncated
// answers) from a mutable in-memory zone. Built from `dns-packet` + `node:dgram`; Node's
// `dns.promises.Resolver#setServers([dns.address])` (and so `svc serve --dns system --dns-server …`) talks to it.
//
//   const dns = await startDnsServer();
//   dns.set('svc1._domainkey.foo.test', 'TXT', ['v=DKIM1; k=rsa; p=…']);
//   dns.set('bounces.foo.test', 'MX', ['10 feedback.svc.test']);   // or [{ priority: 10, exchange: '…' }]
//   dns.set('links.foo.test', 'CNAME', ['track.svc.test']);
//   dns.set('shop.foo.test', 'A', ['127.0.0.1']);
//   dns.remove('links.foo.test', 'CNAME');
//   dns.address; // '127.0.0.1:PORT'
//   await dns.close();
//
// Unknown names answer NXDOMAIN; a known name without the asked type answers NOERROR with no answers.
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket from 'dns-packet';

export type ZoneType = 'TXT' | 'MX' | 'CNAME' | 'A' | 'AAAA';
export type MxValue = { priority: number; exchange: string };

export interface DnsServer {
  /** `127.0.0.1:PORT`, for `setServers` / `dnsServer`. */
  readonly address: string;
  readonly port: number;
  /** Replaces the records of one host and type. TXT values are whole strings (split into 255-byte chunks on the wire). */
  set(host: string, type: ZoneType, values: Array<string | MxValue>): void;
  /** Removes the records of one host and type (the name stays known while it has other types). */
  remove(host: string, type: ZoneType): void;
  /** Empties the zone. */
  clear(): void;
  /** Every question answered so far, as `TYPE name` (lowercased). */
  readonly queries: string[];
  close(): Promise<void>;
}

const RCODE_SERVFAIL = 2;
const RCODE_NXDOMAIN = 3;
const RCODE_NOTIMP = 4;
const TTL = 5;

const canon = (host: string) => host.trim().toLowerCase().replace(/\.$/, '');

/** Splits a TXT value into DNS character-strings of at most 255 bytes (a character-string's length is one byte). */
export function txtCharacterStrings(value: string): Buffer[] {
  const bytes = Buffer.from(value, 'utf8');
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 255) out.push(bytes.subarray(i, i + 255));
  return out.length ? out : [Buffer.alloc(0)];
}

function toMx(v: string | MxValue): MxValue {
  if (typeof v !== 'string') return v;
  const [prio, exchange] = v.trim().split(/\s+/);
  if (!exchange || !/^\d+$/.test(prio!)) throw new Error(`MX value must be "PRIORITY HOST", got "${v}"`);
  return { priority: Number(prio), exchange };
}

export async function startDnsServer(opts: { host?: string } = {}): Promise<DnsServer> {
  const host = opts.host ?? '127.0.0.1';
  /** host → type → answers (as dns-packet answer `data`). */
  const zone = new Map<string, Map<ZoneType, unknown[]>>();
  const queries: string[] = [];

  function answer(query: Buffer, maxSize: number | null): Buffer | null {
    let q: dnsPacket.Packet;
    try {
      q = dnsPacket.decode(query);
    } catch {
      return null; // not DNS: ignore, as a server would
    }
    const question = q.questions?.[0];
    const base = {
      type: 'response' as const,
      id: q.id,
      // Authoritative, recursion desired echoed, recursion available.
      flags: dnsPacket.AUTHORITATIVE_ANSWER | (q.flags! & dnsPacket.RECURSION_DESIRED) | dnsPacket.RECURSION_AVAILABLE,
      questions: q.questions ?? [],
    };
    if (!question) return dnsPacket.encode({ ...base, flags: base.flags | RCODE_NOTIMP, answers: [] });
    const name = canon(question.name);
    queries.push(`${question.type} ${name}`);
    const types = zone.get(name);
    if (!types) return dnsPacket.encode({ ...base, flags: base.flags | RCODE_NXDOMAIN, answers: [] });
    const data = types.get(question.type as ZoneType) ?? [];
    const answers = data.map((d) => ({
      type: question.type,
      class: 'IN',
      name: question.name,
      ttl: TTL,
      data: d,
    })) as dnsPacket.Answer[];
    const full = dnsPacket.encode({ ...base, answers });
    if (maxSize != null && full.length > maxSize) {
      // Too big for this UDP reply: truncated, so the client retries over TCP.
      return dnsPacket.encode({ ...base, flags: base.flags | dnsPacket.TRUNCATED_RESPONSE, answers: [] });
    }
    return full;
  }

  /** Like `answer`, but a bug in the zone data answers SERVFAIL instead of crashing the test process. */
  function safeAnswer(query: Buffer, maxSize: number | null): Buffer | null {
    try {
      return answer(query, maxSize);
    } catch {
      try {
        const q = dnsPacket.decode(query);
        return dnsPacket.encode({
          type: 'response',
          id: q.id,
          flags: RCODE_SERVFAIL,
          questions: q.questions ?? [],
          answers: [],
        });
      } catch {
        return null;
      }
    }
  }

  /** The UDP payload size the client accepts: its EDNS0 OPT record's, else the classic 512 bytes. */
  function udpLimit(query: Buffer): number {
    try {
      const q = dnsPacket.decode(query);
      const opt = (q.additionals ?? []).find((a) => a.type === 'OPT') as { udpPayloadSize?: number } | undefined;
      return Math.max(512, opt?.udpPayloadSize ?? 512);
    } catch {
      return 512;
    }
  }

  // TCP on the same port (RFC 1035 section 4.2.2: two-byte length prefix), for answers that do not fit in UDP.
  const sockets = new Set<net.Socket>();
  const tcp = net.createServer((sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => sock.destroy());
    let buf = Buffer.alloc(0);
    sock.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 2) {
        const len = buf.readUInt16BE(0);
        if (buf.length < 2 + len) break;
        const msg = buf.subarray(2, 2 + len);
        buf = buf.subarray(2 + len);
        const reply = safeAnswer(msg, null);
        if (reply) {
          const framed = Buffer.alloc(2 + reply.length);
          framed.writeUInt16BE(reply.length, 0);
          reply.copy(framed, 2);
          sock.write(framed);
        }
      }
    });
  });
  // UDP and TCP on one port: a free UDP port whose TCP twin is taken (say, as the local port of an outgoing connection,
  // which refuses connections) would leave every answer too long for UDP refused, so such a port is let go and another
  // tried.
  let udp!: dgram.Socket;
  let port = 0;
  for (let tries = 0; ; tries++) {
    udp = dgram.createSocket('udp4');
    udp.on('message', (msg, rinfo) => {
      const reply = safeAnswer(msg, udpLimit(msg));
      if (reply) udp.send(reply, rinfo.port, rinfo.address);
    });
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(0, host, () => {
        udp.off('error', reject);
        resolve();
      });
    });
    port = udp.address().port;
    const tcpUp = await new Promise<boolean>((resolve) => {
      tcp.once('error', () => resolve(false));
      tcp.listen(port, host, () => resolve(true));
    });
    if (tcpUp) break;
    await new Promise<void>((resolve) => udp.close(() => resolve()));
    if (tries === 20) throw new Error('no port free for both UDP and TCP');
  }

  return {
    address: `${host}:${port}`,
    port,
    queries,
    set(h, type, values) {
      const name = canon(h);
      const types = zone.get(name) ?? new Map<ZoneType, unknown[]>();
      let data: unknown[];
      if (type === 'TXT') data = values.map((v) => txtCharacterStrings(String(v)));
      else if (type === 'MX')
        data = values.map((v) => {
          const mx = toMx(v);
          return { preference: mx.priority, exchange: mx.exchange.trim() };
        });
      else data = values.map((v) => String(v).trim()); // targets keep their case and trailing dot, as published
      types.set(type, data);
      zone.set(name, types);
    },
    remove(h, type) {
      const name = canon(h);
      const types = zone.get(name);
      if (!types) return;
      types.delete(type);
      if (types.size === 0) zone.delete(name);
    },
    clear() {
      zone.clear();
    },
    async close() {
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}
