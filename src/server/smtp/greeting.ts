// The sink's 220 goes out as soon as a connection is accepted. smtp-server waits 100 ms before it greets each new
// connection (a timer hard-coded in SMTPConnection.init, to catch clients that talk before the greeting, a spam
// trait), so a client that opens one connection per message — nodemailer without `pool`, most application code —
// could hand over at most 10 messages a second on each connection it has open: 193 messages/s from 20 at once, where
// postfix's smtp-sink took 4,646. A sink catches mail from programs on this machine; it has no spammers to slow down.
//
// This replaces SMTPConnection.init and mirrors SMTPServer.connect, which builds the connection and calls init: both
// are internals of smtp-server, so its version is pinned exactly in package.json, and greeting.test.ts compares
// both methods with the text this was written against and shows the library still waits where this does not.
import type { Socket } from 'node:net';
import type { SMTPServer } from 'smtp-server';
import { SMTPConnection } from 'smtp-server/lib/smtp-connection.js';

/** An SMTPConnection that greets at once: the library's init() without its 100 ms timer. */
class PromptConnection extends SMTPConnection {
  override init(): void {
    this._setListeners(() => {
      // The library's connection limit (maxClients), checked as init() checks it: this connection is already counted.
      const server = this._server;
      if (server.options.maxClients && server.connections.size > server.options.maxClients) {
        return this.send(421, this.name + ' Too many connected clients, try again in a moment', false);
      }
      this.connectionReady();
    });
  }
}

/**
 * Makes `server` greet every new connection at once. A client that talks first (sends EHLO before it has read the
 * 220) is answered in order after the greeting, like any client that pipelines: there is no window left in which it
 * could be early, and nothing it sends is answered before the greeting.
 */
export function greetAtOnce(server: SMTPServer): void {
  // SMTPServer.connect as the library has it, with a PromptConnection in place of an SMTPConnection.
  server.connect = (socket, socketOptions) => {
    const connection = new PromptConnection(server, socket as Socket, socketOptions);
    server.connections.add(connection);
    connection.on('error', (err: Error) => server._onError(err));
    connection.on('connect', (data) => server._onClientConnect(data));
    connection.init();
  };
}
