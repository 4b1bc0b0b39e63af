// The fast path of the smtp-server seam (smtp-server.ts): the sink's and the submission listeners' connections are
// smtp-server's, with two changes.
//
// The 220 goes out as soon as a connection is accepted. smtp-server waits 100 ms before it greets each new connection
// (a timer hard-coded in SMTPConnection.init, to catch clients that talk before the greeting, a spam trait), so a
// client that opens one connection per message — nodemailer without `pool`, most application code — could hand over
// at most 10 messages a second on each connection it has open (bench/README.md, bench:smtp). A sink catches mail from
// programs on this machine; it has no spammers to slow down.
//
// The replies to the commands of one read leave in one write, also over TLS (implicit, or after STARTTLS). smtp-server
// writes each reply as it is made, so the MAIL, RCPT and DATA a client pipelines (RFC 2920) cost three writes and wake
// the client three times; grouped until the input at hand is used up, as RFC 2920 section 3.2 has a server do, they
// cost one (bench/README.md, bench:smtp).
//
// This replaces SMTPConnection.init and mirrors SMTPServer.connect, which builds the connection and calls init: both
// are internals of smtp-server (its `lib/smtp-connection.js`, the private methods and fields below), written against
// the version smtp-server.ts pins; smtp-server.test.ts compares both methods with the text this was written against
// and shows the library still waits where this does not.
import type { Socket } from 'node:net';
import type { SMTPServer } from 'smtp-server';
import type { SMTPConnection } from 'smtp-server/lib/smtp-connection.js';

/** The private methods this file calls or replaces, by class: the probe of the seam. */
const PARTS = {
  SMTPConnection: ['init', '_setListeners', 'connectionReady', 'send'],
  SMTPServer: ['connect', 'onSecure', '_onError', '_onClientConnect'],
} as const;

/** The first private part this file uses that the given classes lack (`SMTPServer.prototype._onError`), or null. */
export function missingParts(lib: { SMTPConnection: unknown; SMTPServer: unknown }): string | null {
  for (const [name, methods] of Object.entries(PARTS)) {
    const prototype = (lib[name as keyof typeof PARTS] as { prototype?: Record<string, unknown> } | undefined)
      ?.prototype;
    if (!prototype) return name;
    for (const method of methods) if (typeof prototype[method] !== 'function') return `${name}.prototype.${method}`;
  }
  return null;
}

const grouped = new WeakSet<Socket>();

/**
 * Holds what is written to `socket` while one read is worked through and writes it at the next tick. Added ahead of the
 * parser's own listener, once per socket: the plain one, the implicit TLS one, and the one a STARTTLS makes.
 */
function groupReplies(socket: Socket): void {
  if (grouped.has(socket)) return;
  grouped.add(socket);
  socket.prependListener('data', () => {
    if (socket.writableCorked) return;
    socket.cork();
    process.nextTick(() => socket.uncork());
  });
}

/**
 * Makes `server` greet every new connection at once and group the replies to pipelined commands, with connections of a
 * subclass of `Connection` (smtp-server's own SMTPConnection class). A client that talks first (sends EHLO before it has
 * read the 220) is answered in order after the greeting, like any client that pipelines: with an onConnect that answers
 * at once, the greeting is written before anything is read from the socket.
 */
export function useSinkConnections(server: SMTPServer, Connection: typeof SMTPConnection): void {
  class SinkConnection extends Connection {
    /** The library's init() without its 100 ms timer, and with the replies of one read grouped. */
    override init(): void {
      this._setListeners(() => {
        // The library's connection limit (maxClients), checked as init() checks it: this connection is already counted.
        const server = this._server;
        if (server.options.maxClients && server.connections.size > server.options.maxClients) {
          return this.send(421, `${this.name} Too many connected clients, try again in a moment`, false);
        }
        this.connectionReady();
      });
      groupReplies(this._socket);
    }
  }
  // SMTPServer.connect as the library has it, with a SinkConnection in place of an SMTPConnection.
  server.connect = (socket, socketOptions) => {
    const connection = new SinkConnection(server, socket as Socket, socketOptions);
    server.connections.add(connection);
    connection.on('error', (err: Error) => server._onError(err));
    connection.on('connect', (data) => server._onClientConnect(data));
    connection.init();
  };
  // After STARTTLS the connection reads from a TLS socket of its own, made by the library: its replies are grouped
  // too, once the library has piped it to the parser (which it does when onSecure calls back).
  const onSecure = server.onSecure.bind(server);
  server.onSecure = (socket, session, callback) =>
    onSecure(socket, session, (err) => {
      callback(err);
      if (!err) groupReplies(socket as Socket);
    });
}
