// `svc mcp`: the tools of tools.ts registered with the MCP SDK's server, served on stdio. The one module that loads
// the SDK, and only `svc mcp` loads it (commands/mcp.ts imports it when the command runs): in the bundle the SDK is
// part of this module's chunk, which no other command reads.
import type { Readable, Writable } from 'node:stream';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { VERSION } from '../../lib/version.js';
import type { Context } from '../context.js';
import { callTool, createSession, INSTRUCTIONS, tools, type ToolResult } from './tools.js';

/** The MCP server with every tool registered, over the Context's client; not yet connected to a transport. */
export function createMcpServer(
  ctx: Context,
  o: { onToolError?(name: string, result: ToolResult): void } = {},
): McpServer {
  const server = new McpServer({ name: 'svc', title: 'svc', version: VERSION }, { instructions: INSTRUCTIONS });
  const session = createSession(ctx);
  // "Since svc mcp started": the service clock is read now (and at the first wait, if the server is not reached now).
  session.start().catch(() => {});
  for (const t of tools()) {
    server.registerTool(
      t.name,
      { title: t.title, description: t.description, inputSchema: t.input, annotations: t.annotations },
      async (args: unknown, extra: RequestHandlerExtra<ServerRequest, ServerNotification>) => {
        const result = await callTool(t, args, { ctx, signal: extra.signal, session, progress: progressOf(extra) });
        if (result.isError) o.onToolError?.(t.name, result);
        return result;
      },
    );
  }
  return server;
}

/**
 * MCP progress for a call whose client asked for it (a `progressToken`): each message a notification, numbered, so an
 * agent's client can show that a long call (a wait for mail) is under way.
 */
function progressOf(extra: RequestHandlerExtra<ServerRequest, ServerNotification>) {
  const token = extra._meta?.progressToken;
  if (token === undefined) return undefined;
  let n = 0;
  return (message: string) =>
    extra
      .sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: ++n, message } })
      .catch(() => {});
}

/**
 * Serves the tools on the IO's stdin and stdout, which then carry protocol messages only (a line at start and one
 * per failed call go to stderr). Returns when stdin closes (the client went away) or at the first SIGINT or SIGTERM,
 * once the server is closed; the process then exits 0 without waiting for a call still in progress.
 */
export async function serveStdio(ctx: Context): Promise<void> {
  const { io } = ctx;
  const interrupted = io.interrupt();
  const server = createMcpServer(ctx, {
    onToolError: (name, result) => {
      const first = result.content[0];
      io.info(`svc mcp: ${first?.type === 'text' ? first.text : `${name} failed`}`);
    },
  });
  server.server.onerror = (err) => io.info(`svc mcp: ${err.message}`);

  const transport = new StdioServerTransport(io.stdin as Readable, io.stdout as Writable);
  const ended = new Promise<string>((resolve) => {
    io.stdin.once('end', () => resolve('stdin closed'));
    io.stdin.once('close', () => resolve('stdin closed'));
    io.stdin.once('error', (err: Error) => resolve(`stdin failed (${err.message})`));
    if (interrupted.aborted) resolve('interrupted');
    interrupted.addEventListener('abort', () => resolve('interrupted'), { once: true });
    // Set before connect, which keeps it and calls it when the transport closes.
    transport.onclose = () => resolve('closed');
  });

  await server.connect(transport);
  const where = await ctx.baseUrl().then(
    (b) => b.url,
    () => 'the base URL',
  );
  io.info(`svc mcp: serving the Model Context Protocol on stdio for ${where}, until stdin closes`);
  // Run by hand in a terminal, it would seem to hang: say who talks to it.
  if (io.stdinIsTTY)
    io.info(
      'svc mcp: an MCP client (a coding agent) starts this command and speaks JSON-RPC on its stdin; Ctrl-C stops it',
    );
  const why = await ended;
  await server.close().catch(() => {});
  io.info(`svc mcp: ${why}; stopped`);
}
