// A base URL with the wrong scheme for its port: https:// to a server that speaks plain HTTP there (the TLS handshake
// fails on its first bytes, EPROTO), or http:// to one that speaks HTTPS (it drops the request, ECONNRESET). Asked only
// after a connection failed that way, so that the ConnectionError can say which scheme the port answers.

/** The codes of a TLS handshake answered by something that does not speak TLS. */
const NOT_TLS = new Set(['EPROTO', 'ERR_SSL_WRONG_VERSION_NUMBER', 'ERR_SSL_PACKET_LENGTH_TOO_LONG']);
/** The codes of a connection closed on a request: what a TLS listener does with plain HTTP. */
const DROPPED = new Set(['ECONNRESET', 'UND_ERR_SOCKET']);
/** How long the question may take: it only adds to a message. */
const PROBE_MS = 2_000;

/** The other scheme, when the port of `url` speaks it and failed with `code` under the scheme of `url`. */
export async function otherScheme(url: URL, code: string): Promise<'http:' | 'https:' | undefined> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (url.protocol === 'https:' && NOT_TLS.has(code)) {
    const port = Number(url.port || 443);
    return (await speaksHttp(host, port)) ? 'http:' : undefined;
  }
  if (url.protocol === 'http:' && DROPPED.has(code)) {
    const port = Number(url.port || 80);
    return (await speaksTls(host, port)) ? 'https:' : undefined;
  }
  return undefined;
}

/** Whether host:port answers a plain HTTP request with an HTTP status line. */
function speaksHttp(host: string, port: number): Promise<boolean> {
  const net = process.getBuiltinModule('node:net');
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (yes: boolean) => {
      socket.destroy();
      resolve(yes);
    };
    socket.setTimeout(PROBE_MS, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write(`HEAD / HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`));
    socket.once('data', (d: Buffer) => done(d.subarray(0, 5).toString('latin1') === 'HTTP/'));
    socket.once('end', () => done(false));
  });
}

/** Whether host:port completes a TLS handshake (whatever its certificate: the question is only whether it speaks TLS). */
function speaksTls(host: string, port: number): Promise<boolean> {
  const tls = process.getBuiltinModule('node:tls');
  const net = process.getBuiltinModule('node:net');
  return new Promise((resolve) => {
    const socket = tls.connect({
      host,
      port,
      servername: net.isIP(host) ? undefined : host,
      rejectUnauthorized: false,
    });
    const done = (yes: boolean) => {
      socket.destroy();
      resolve(yes);
    };
    socket.setTimeout(PROBE_MS, () => done(false));
    socket.once('error', () => done(false));
    socket.once('secureConnect', () => done(true));
  });
}
