import { Command } from 'commander';
import { examples, type Runner } from '../command.js';
import type { Context } from '../context.js';

export function mcpCommand(runner: Runner): Command {
  const cmd = new Command('mcp')
    .description(
      'Run a Model Context Protocol server on stdio, so a coding agent can send mail, wait for it, read its links ' +
        'and codes, and move the clock of a local server (docs/testing.md, "Agents: svc mcp")',
    )
    .addHelpText(
      'after',
      '\nTools: send_email, list_messages, get_message, check_message, release_message,\n' +
        'wait_for_message, list_events, advance_clock, publish_domain_records,\n' +
        'set_chaos. The server, API\n' +
        'key and admin token are found as by every command (--base-url, --api-key,\n' +
        '--admin-token, SVC_*, the profile). stdout carries protocol messages only; it\n' +
        'ends when stdin closes, or at SIGINT or SIGTERM.',
    )
    .action((_o: object, c: Command) => runner(c, mcpRun, {}));
  return examples(cmd, 'svc mcp', 'SVC_BASE_URL=http://127.0.0.1:4610/v1 SVC_API_KEY=svc_test_… svc mcp');
}

/** Serves until stdin closes or a signal comes; the MCP SDK is loaded only now. */
export async function mcpRun(ctx: Context): Promise<void> {
  const { serveStdio } = await import('../mcp/server.js');
  await serveStdio(ctx);
}
