// The tools of `svc mcp` (docs/testing.md, "Agents: svc mcp"): a table of what a coding agent may do with a local
// server — send, read caught mail, wait for the next message and take its link or code, read events, move the
// manual clock, publish a domain's records — each a thin call of the project's own client, through the Context like
// every command (the profile, --base-url, --api-key, --admin-token, SVC_*). Every input is a zod schema, the
// contract's where it has one; every answer is JSON text; every failure a tool error (`isError`) with the service's
// Problem, never a protocol error. Nothing here loads the MCP SDK (server.ts registers the table with it): the
// tools run, and are tested, without it and without stdio.
import * as z from 'zod';
import type { Client } from '../../client/index.js';
import { domainNamed } from '../../client/domains.js';
import { chooseLink, findCodes, findLinks, missingCode, missingLink, type MessageLink } from '../../lib/extract.js';
import {
  describeWanted,
  ServerStopped,
  latestMissed,
  subjectMatches,
  waitForMessage,
} from '../../client/inbox-wait.js';
import { Id, InputTimestamp } from '../../contract/common.js';
import { SendEmailRequest } from '../../contract/emails.js';
import { EventType } from '../../contract/events.js';
import { MessagesQuery, ReleaseRequest, type CaughtMessage, type CaughtMessageSummary } from '../../contract/inbox.js';
import { PublishDomainRequest } from '../../contract/zone.js';
import { SetChaosRequest } from '../../contract/chaos.js';
import { parseDuration } from '../../lib/duration.js';
import { humanDuration } from '../command.js';
import type { Context } from '../context.js';
import { CommandError, clientErrors, describeError, problemOf, type ClientErrors } from '../errors.js';
import { explainReset } from '../reset.js';

/** `wait_for_message` waits this long unless told otherwise (as `svc inbox wait` does)… */
export const DEFAULT_WAIT_MS = 30_000;
/** …and never longer: a tool call holds the agent (and MCP clients give up on a request after a minute or two). */
export const MAX_WAIT_MS = 120_000;

/** A tool's answer, as MCP's `tools/call` result has it (the SDK's CallToolResult, of which these tools use this much). */
export interface ToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** MCP's hints about a tool, for the client (the SDK's ToolAnnotations). */
export interface ToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** What a tool's work runs with. */
export interface ToolEnv {
  ctx: Context;
  /** Aborted when the client cancels the call. */
  signal: AbortSignal;
  session: Session;
  /** Tells the client how the call is going (MCP progress), when it asked to be told. */
  progress?(message: string): void | Promise<void>;
}

/**
 * One tool: its name and description as the agent reads them, its input schema (a zod object, validated by the SDK
 * before `run`), and its work. `structured`: the answer is also given as `structuredContent` (small objects; the
 * tools answering with a whole message give its JSON as text only).
 */
export interface Tool<S extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  input: S;
  annotations: ToolAnnotations;
  structured: boolean;
  run(args: z.output<S>, env: ToolEnv): Promise<Record<string, unknown>>;
}

/** A caught message named by either of its ids. */
const caughtId = z
  .string()
  .min(1)
  .max(64)
  .describe("the caught message's id (eml_…), or the id send_email answered (msg_…)");

/** A tool, its `run` typed from its input schema. */
function tool<S extends z.ZodObject>(t: Tool<S>): Tool<S> {
  return t;
}

/** What one `svc mcp` process remembers between calls: when it started. */
export interface Session {
  /**
   * The service time `svc mcp` started at: the service clock, read once, when it first reached the server. A wait
   * takes mail caught at or after it (what waits returned is marked on the server: client/inbox-wait.ts).
   */
  start(): Promise<{ since: string }>;
}

export function createSession(ctx: Context): Session {
  let start: ReturnType<Session['start']> | undefined;
  const read = async () => ({ since: (await (await ctx.client()).sandbox('getClock')).body.now });
  return {
    start: () =>
      (start ??= read().catch((err: unknown) => {
        // Not reached (no server yet, no admin token): the next wait asks again.
        start = undefined;
        throw err;
      })),
  };
}

/** A caught message as the tools give it: every field of `GET /sandbox/messages/{id}`, its links and its codes. */
export type MessageView = CaughtMessage & { links: MessageLink[]; codes: string[] };

async function messageView(client: Client, id: string): Promise<MessageView> {
  return viewOf((await client.sandbox('getMessage', { params: { id } })).body);
}

/** A message as the tools give it: with its links and codes. */
const viewOf = (m: CaughtMessage): MessageView => ({ ...m, links: findLinks(m), codes: findCodes(m) });

/** Every tool, in the order `tools/list` gives them. Built when `svc mcp` runs (the contract's schemas with it). */
export function tools(): Tool[] {
  const Limit = z.number().int().min(1).max(100);
  // The filters of the tools that look for caught mail: a recipient as the sandbox's listing takes it, and a part of
  // a subject (a header line is at most 998 characters).
  const To = MessagesQuery.shape.to;
  const Workspace = MessagesQuery.shape.workspace.describe(
    "only a workspace's mail, by its id or name (any case): sent with its API keys, or caught from a client that " +
      'logged in with one',
  );
  const SubjectPart = z.string().max(998).optional();
  const table = [
    tool({
      name: 'send_email',
      title: 'Send an email',
      description:
        'Send an email through the service (POST /v1/emails) with the configured API key. A local server (svc ' +
        'serve) catches every message in its SMTP sink, where list_messages, get_message and wait_for_message read it. ' +
        '`from` must be on a verified domain of the workspace (the seeded sandbox has example.test). Give ' +
        '`scheduled_at` to send later (see advance_clock), `idempotency_key` to make a retry safe. Answers the ' +
        "email's id, status (queued or scheduled) and created_at (the service's time).",
      input: SendEmailRequest.extend({
        idempotency_key: z
          .string()
          .min(1)
          .max(255)
          .optional()
          .describe('the Idempotency-Key: the same key and body again answers the first send instead of sending twice'),
      }),
      annotations: { destructiveHint: false, openWorldHint: false },
      structured: true,
      async run({ idempotency_key, ...body }, { ctx }) {
        const r = await (await ctx.client()).call('sendEmail', { body, idempotencyKey: idempotency_key });
        return r.body;
      },
    }),
    tool({
      name: 'list_messages',
      title: 'List caught mail',
      description:
        "The mail the local server's SMTP sink caught, newest first: summaries (id, from, to, cc, subject, " +
        'received_at, status, preview, workspace, …). `to` is an envelope recipient, To or Cc address; `subject` a ' +
        'part of the subject, in any case; `workspace` a workspace id or name. get_message reads one whole.',
      input: z.strictObject({
        to: To.describe('only mail to this address'),
        workspace: Workspace,
        subject: SubjectPart.describe('only mail whose subject contains this text (any case)'),
        limit: Limit.optional().describe('at most this many (1–100, default 20)'),
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
      structured: true,
      async run({ to, workspace, subject, limit = 20 }, { ctx }) {
        const client = await ctx.client();
        const data: CaughtMessageSummary[] = [];
        for (let after: string | undefined; ; ) {
          const page = (
            await client.sandbox('listMessages', {
              query: { to, workspace, after, limit: subject === undefined ? limit : 100 },
            })
          ).body;
          for (const m of page.data) {
            if (!subjectMatches(m, subject)) continue;
            if (data.length === limit) return { data, has_more: true };
            data.push(m);
          }
          if (!page.has_more) return { data, has_more: false };
          if (data.length === limit && subject === undefined) return { data, has_more: true };
          after = page.data.at(-1)!.id;
        }
      },
    }),
    tool({
      name: 'get_message',
      title: 'Read a caught message',
      description:
        'One caught message, whole: subject, from, to, cc, text, html, headers, attachments, DKIM, the /v1 ' +
        "message's status and events, and what was found in it: `links` (every http(s) link, once, with its " +
        '`text`, its real target `url` (a click-tracking redirect decoded), the redirect `tracked`, and its `role`: ' +
        'action, view-in-browser, unsubscribe, preferences, social, image or other) and `codes` (the one-time codes ' +
        'a person would read as such, best first).',
      input: z.strictObject({
        id: caughtId,
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
      structured: false,
      async run({ id }, { ctx }) {
        return messageView(await ctx.client(), id);
      },
    }),
    tool({
      name: 'check_message',
      title: 'Check a caught message',
      description:
        'Checks a caught message the way a careful reviewer would (docs/checks.md): `html-compatibility` (its HTML ' +
        "and CSS against each mail client's support, a market-weighted score, findings with line and column), " +
        '`links` (what every link and image answers), `authentication` (SPF, DKIM, DMARC as a receiver judges ' +
        'them), `content` (text part, alt text, size, unsubscribe headers, subject, valid HTML), `accessibility` and ' +
        '`spam` (with a spamd). Answers the report: `summary` {errors, warnings, notices, score} and `checks`, each ' +
        'with its `status` and `findings` (severity, rule, title, detail). Made on the first call and kept; ' +
        '`refresh_links` checks the links again.',
      input: z.strictObject({
        id: caughtId,
        refresh_links: z.boolean().optional().describe('check the links again rather than answer the kept result'),
      }),
      annotations: { readOnlyHint: true, openWorldHint: true },
      structured: false,
      async run({ id, refresh_links }, { ctx }) {
        const query = refresh_links ? { refresh: 'links' as const } : {};
        return (await (await ctx.client()).sandbox('getMessageChecks', { params: { id }, query })).body;
      },
    }),
    tool({
      name: 'release_message',
      title: 'Release a caught message through the relay',
      description:
        'Sends a caught message, exactly as caught (its bytes untouched, its DKIM signature still valid), to the ' +
        "addresses given, through the local server's relay (`svc serve --relay-url`; docs/local-server.md#release-" +
        "and-relay). Each address must be on the relay's allow-list (`--relay-allow`). Answers `to`, the envelope " +
        '`mail_from`, the `relay` (its URL without the password) and its `response`; the release joins the ' +
        "message's timeline. A refusal is a tool error quoting the relay's reply (`relay_refused`, " +
        '`relay_unreachable`), or naming the allow-list (`relay_recipient_not_allowed`) or `--relay-url` ' +
        '(`relay_not_configured`).',
      input: z.strictObject({
        id: caughtId,
        to: ReleaseRequest.shape.to.describe('the recipient, or several (each on the allow-list)'),
      }),
      annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: true },
      structured: true,
      async run({ id, to }, { ctx }) {
        return (await (await ctx.client()).sandbox('releaseMessage', { params: { id }, body: { to } })).body;
      },
    }),
    tool({
      name: 'wait_for_message',
      title: 'Wait for the next message',
      description:
        'Waits for the next caught message (to `to`, of `workspace`, with `subject` in its subject) and answers it ' +
        'as get_message does; with `extract` also the real target of its action link (the one worded as what the ' +
        'mail is for; `link_text` or `link_match` to choose another) or the one-time code a person would type ' +
        '(`code_pattern` to say what it looks like), as `link` or `code`. "Next" is ' +
        'the oldest matching message caught since svc mcp started that no earlier wait returned (this one, another ' +
        'svc mcp, svc inbox wait), so call it after the action that sends, even once the mail is there: send, wait, ' +
        'send, wait answers the two messages in turn. `since` (a service time, e.g. the created_at of send_email) ' +
        'narrows it to mail caught at or after that time. Gives up after `timeout_ms`.',
      input: z.strictObject({
        to: To.describe('an envelope recipient, To or Cc address'),
        workspace: Workspace,
        subject: SubjectPart.describe('a part of the subject, in any case'),
        timeout_ms: z
          .number()
          .int()
          .min(0)
          .optional()
          .describe(`milliseconds to wait (default ${DEFAULT_WAIT_MS}; at most ${MAX_WAIT_MS}, a longer one is cut)`),
        extract: z
          .enum(['link', 'code'])
          .optional()
          .describe("also answer the real target of the message's action link, or its one-time code"),
        link_text: z
          .string()
          .min(1)
          .max(200)
          .optional()
          .describe('with extract "link": the link whose text contains this (any case), rather than the action'),
        link_match: z
          .string()
          .min(1)
          .max(2000)
          .optional()
          .describe('with extract "link": the link whose real target contains this (any case), rather than the action'),
        code_pattern: z
          .string()
          .min(1)
          .max(200)
          .refine(isRegExp, 'not a regular expression')
          .optional()
          .describe(
            'with extract "code": a regular expression the code matches whole (its first group, if it has one)',
          ),
        since: InputTimestamp.optional().describe(
          'only mail received at or after this service time (ISO 8601) rather than since svc mcp started',
        ),
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
      structured: false,
      async run(a, { ctx, signal, session, progress }) {
        // Choosing a link or a code asks for it.
        const choosesLink = a.link_text !== undefined || a.link_match !== undefined;
        const extract = a.extract ?? (choosesLink ? 'link' : a.code_pattern !== undefined ? 'code' : undefined);
        if ((choosesLink && extract !== 'link') || (a.code_pattern !== undefined && extract !== 'code'))
          throw new CommandError(
            'link_text and link_match choose a link (extract "link"), code_pattern a code (extract "code"): give the ones of the extract asked for',
          );
        const client = await ctx.client();
        const timeout = Math.min(a.timeout_ms ?? DEFAULT_WAIT_MS, MAX_WAIT_MS);
        const since = a.since ?? (await session.start()).since;
        const filters = { to: a.to, workspace: a.workspace, subject: a.subject };
        const wanted = describeWanted(filters);
        let found: CaughtMessage | undefined;
        try {
          found = await waitForMessage(client, {
            ...filters,
            since,
            timeoutMs: timeout,
            // The wait ends with the call: a cancelled call stops waiting.
            clock: {
              now: ctx.clock.now,
              sleep: (ms, s) => ctx.clock.sleep(ms, s ? AbortSignal.any([s, signal]) : signal),
            },
            onWaiting: () =>
              progress?.(`waiting up to ${humanDuration(timeout)} for a ${wanted} caught since ${since}`),
          });
        } catch (err) {
          if (err instanceof ServerStopped) throw new CommandError(err.message, 'start it again with `svc serve`');
          throw err;
        }
        if (!found) {
          // Matching mail from before the wait's start, or returned already: the agent is told where it is.
          const missed = await latestMissed(client, filters, since);
          const why =
            missed?.why === 'claimed'
              ? 'and an earlier wait returned it'
              : a.since === undefined
                ? 'before svc mcp started'
                : 'before since';
          throw new CommandError(
            `no ${wanted} was caught within ${humanDuration(timeout)} (counting from ${since})`,
            missed
              ? `the latest one, ${missed.message.id}, came at ${missed.message.received_at} ${why}: read it with get_message`
              : 'check the address and that the send was accepted; list_messages shows what the inbox holds',
          );
        }
        // The claim that took it answered with it in full.
        const message = viewOf(found);
        if (!extract) return message;
        if (extract === 'code') {
          const code = a.code_pattern === undefined ? message.codes[0] : findCodes(message, a.code_pattern)[0];
          if (code === undefined)
            throw new CommandError(
              `${found.id} arrived, but it has ${missingCode(a.code_pattern)}`,
              'read what it says with get_message',
            );
          return { code, message };
        }
        const choice = { text: a.link_text, match: a.link_match };
        const link = chooseLink(message.links, message.subject, choice);
        if (!link) {
          throw new CommandError(
            `${found.id} arrived, but it has ${missingLink(message.links, choice)}`,
            'read its links (text, url, role) with get_message',
          );
        }
        // The redirect too, for a test of click events: following it records email.clicked.
        return { link: link.url, tracked_link: link.tracked, message };
      },
    }),
    tool({
      name: 'list_events',
      title: 'List events',
      description:
        "The workspace's events (GET /v1/events), oldest first: email.queued, email.sent, email.delivered, " +
        'email.bounced, …, each with its data (message_id: the id send_email answered; from, to, subject, …). Pass ' +
        'the last id as `after` to read on; `has_more` says whether there is more.',
      input: z.strictObject({
        type: z
          .union([EventType, z.array(EventType).min(1)])
          .optional()
          .describe('only events of this type (or these types)'),
        limit: Limit.optional().describe('at most this many (1–100, default 20)'),
        after: Id('evt').optional().describe('only events after this one (its id)'),
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
      structured: true,
      async run({ type, limit, after }, { ctx }) {
        return (await (await ctx.client()).call('listEvents', { query: { type, limit, after } })).body;
      },
    }),
    tool({
      name: 'advance_clock',
      title: 'Advance the manual clock',
      description:
        "Moves the local server's manual clock (svc serve --clock manual) forward, then runs every job that became " +
        'due — scheduled sends, delivery retries, deferred outcomes, webhook retries, domain checks — before it ' +
        'answers the new time (`now`) and how many jobs ran (`ran`).',
      input: z.strictObject({
        duration: z
          .union([z.string().max(32), z.number().min(0)])
          .describe("how far: '30s', '10m', '1h', '2d', or a number of seconds"),
      }),
      annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: false },
      structured: true,
      async run({ duration }, { ctx }) {
        const ms = typeof duration === 'number' ? duration * 1000 : parseDuration(duration);
        if (ms === null || !Number.isFinite(ms))
          throw new CommandError(
            `duration takes seconds or a duration such as 30s, 10m, 1h, 2d (got ${JSON.stringify(duration)})`,
          );
        return (await (await ctx.client()).sandbox('moveClock', { body: { advance_seconds: ms / 1000 } })).body;
      },
    }),
    tool({
      name: 'publish_domain_records',
      title: "Publish a domain's DNS records",
      description:
        "Publishes a sending domain's expected DNS records (SPF, DKIM, DMARC, return path, …) in the local " +
        "server's sandbox DNS zone, which `svc serve --dns sandbox` answers from, so that verifying the domain finds " +
        'them. `domain` is its id (dom_…) or its name; `kinds` only some of them; `state: propagating` publishes them ' +
        'as still propagating. Answers the records published.',
      input: PublishDomainRequest.extend({
        domain: z.string().min(1).max(253).describe("the domain's id (dom_…) or name (example.test)"),
      }),
      annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: false },
      structured: true,
      async run({ domain, kinds, state }, { ctx }) {
        const client = await ctx.client();
        const id = /^dom_/.test(domain) ? domain : await domainId(client, domain);
        const r = await client.sandbox('publishDomain', { params: { id }, body: { kinds, state } });
        return { domain_id: id, records: r.body.records };
      },
    }),
    tool({
      name: 'set_chaos',
      title: 'Make the sandbox fail on purpose',
      description:
        "Replaces the local server's chaos rules (PUT /sandbox/chaos; docs/local-server.md#chaos), to test how an " +
        'app copes with failures: each rule has a `match` — `{method?, path?}` on /v1 routes (`/v1/emails/{id}`-style ' +
        "placeholders) or `{smtp: 'connect'|'mail'|'rcpt'|'data'}` on the SMTP sink, which the service's own " +
        'deliveries also reach — and an `action`: `{status, retry_after?}` (a Problem of that status), `{delay_ms}`, ' +
        '`{reset: true}` (the connection dropped) or, for SMTP, `{code, message?}`; `times` applies it to the next N ' +
        'matches only, `probability` (0–1) to a share of them, drawn from `seed` so a run repeats. An empty `rules` ' +
        'clears them. Answers the rules in force, each with how many matches it has left.',
      input: SetChaosRequest,
      annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: false },
      structured: true,
      async run(body, { ctx }) {
        return (await (await ctx.client()).sandbox('setChaos', { body })).body;
      },
    }),
  ];
  return table as unknown as Tool[];
}

/** The id of the workspace's domain named `name` (any case, a trailing dot ignored). */
async function domainId(client: Client, name: string): Promise<string> {
  const d = await domainNamed(client, name);
  if (d) return d.id;
  throw new CommandError(`the workspace has no domain named ${name}`, `add it with \`svc domains add ${name}\``);
}

/** JSON as a tool answers it. */
const json = (value: unknown) => JSON.stringify(value, null, 2);

/**
 * Runs a tool with input already validated: its answer as JSON text (and structured content), or its failure as a
 * tool error — the one line `svc` prints for it (the Problem's title, detail, code and request id, and a hint), then
 * the service's Problem as `{"error": Problem}` when there is one.
 */
export async function callTool(t: Tool, args: unknown, env: ToolEnv): Promise<ToolResult> {
  try {
    // The first call that reaches the server fixes when svc mcp started, before it sends anything (a send, then a
    // wait, must find the mail sent): a server not reachable at start is reached here.
    await env.session.start().catch(() => {});
    const value = await t.run(args as z.output<z.ZodObject>, env);
    return {
      content: [{ type: 'text', text: json(value) }],
      ...(t.structured ? { structuredContent: value } : {}),
    };
  } catch (err) {
    return toolError(t.name, await explainReset(env.ctx, err), await clientErrors());
  }
}

export function toolError(name: string, err: unknown, c: ClientErrors): ToolResult {
  const { line } = describeError(err, name, c);
  const problem = problemOf(err, c);
  return {
    isError: true,
    content: [
      { type: 'text', text: line },
      // status 0: a failure of this side (unreachable, no credential), which the line says whole.
      ...(problem.status ? [{ type: 'text' as const, text: json({ error: problem }) }] : []),
    ],
  };
}

/** What the server tells an agent about itself when it connects. */
export const INSTRUCTIONS =
  "svc's tools for testing an app's email flows against a local `svc serve`: send_email sends through the API; " +
  'wait_for_message waits for the next caught message (with extract: "code" or "link", its one-time code or link, ' +
  'for a sign-up or a password reset); list_messages and get_message read the caught mail; check_message checks ' +
  'one (client support, links, authentication, content); list_events lists the ' +
  'delivery events; advance_clock moves the manual clock (scheduled sends, retries); publish_domain_records ' +
  "publishes a domain's records in the sandbox DNS zone; set_chaos makes the sandbox fail on purpose (an API " +
  "route's status, a delay, a dropped connection, an SMTP reply). A call that fails answers isError with the " +
  "service's Problem.";

/** Whether a `code_pattern` compiles. */
function isRegExp(source: string): boolean {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
}
