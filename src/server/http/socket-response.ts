// The response node:http is writing on a socket, for the 'clientError' listener (server.ts), which node hands the
// socket alone: no public API says whether a response is already under way on it. node keeps it in the socket's
// private field `_httpMessage` (set while a response holds the socket, cleared when it is done), read here and nowhere
// else. Were node to rename it, a response under way would go unseen: its connection still ends, with the refusal
// written after what it had sent.
import type { Duplex } from 'node:stream';

/** The response under way on `socket`, if node has one there. */
export const responseOn = (socket: Duplex): { headersSent: boolean } | undefined =>
  (socket as Duplex & { _httpMessage?: { headersSent: boolean } | null })._httpMessage ?? undefined;
