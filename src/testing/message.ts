// A caught message as the tests see it (svc-mail/testing's `inbox.waitFor`, svc-mail/playwright's): with its links
// and codes read by lib/extract.ts, the rules of `svc inbox wait --extract`. A module of its own so that
// svc-mail/playwright reads messages without loading the server that index.ts starts.
import type { Client } from '../client/index.js';
import { type MessageWait, waitForMessage } from '../client/inbox-wait.js';
import type { CaughtMessage } from '../contract/inbox.js';
import { chooseLink, findCodes, findLinks, missingLink, type LinkChoice, type MessageLink } from '../lib/extract.js';

/** A caught message, with what a test usually looks for in it: the code and the link a person would use. */
export interface TestMessage extends CaughtMessage {
  /**
   * Every http(s) link, once each, as a person sees them: its text, its real target (`url`: a click-tracking redirect
   * decoded), the redirect itself (`tracked`, null when not tracked) and its role (`action`, `view-in-browser`,
   * `unsubscribe`, `preferences`, `social`, `image`, `other`).
   */
  links: MessageLink[];
  /** Every one-time code, best first: what reads as a code by the words around it, in the subject and the body. */
  codes: string[];
  /** The code a person would type (`codes[0]`), or null when nothing reads as a one-time code. */
  code: string | null;
  /** The best code `pattern` matches whole (its first group, when it has one), or null. */
  codeMatching(pattern: RegExp | string): string | null;
  /**
   * The real target of the link a person would click: the action (the link worded as the mail's purpose), or the link
   * whose text contains `text` or whose target contains `match` (a string, any case, or a RegExp). Throws when there is
   * none, naming the links there are.
   */
  link(choice?: LinkChoice): string;
}

/** A caught message with its links and codes read. */
export function readMessage(m: CaughtMessage): TestMessage {
  const links = findLinks(m);
  const codes = findCodes(m);
  return {
    ...m,
    links,
    codes,
    code: codes[0] ?? null,
    codeMatching: (pattern) => findCodes(m, pattern)[0] ?? null,
    link(choice) {
      const chosen = chooseLink(links, m.subject, choice);
      if (chosen) return chosen.url;
      const listed = links.map((l) => `  ${l.role}  ${l.text ? `"${l.text}"  ` : ''}${l.url}`).join('\n');
      throw new Error(`link(): ${m.id} has ${missingLink(links, choice)}${listed ? `. Its links:\n${listed}` : ''}`);
    },
  };
}

/**
 * The wait of svc-mail/testing's and svc-mail/playwright's `inbox.waitFor`: client/inbox-wait.ts's wait, the message
 * it takes read (with its codes and links) from the server's answer, which has it in full. `accept` and `match` see
 * each message the filters take in full, before the wait claims it.
 */
export async function waitAndRead(
  client: Client,
  wait: Omit<MessageWait, 'match'>,
  o: { accept?: (m: CaughtMessage) => boolean | Promise<boolean>; match?: (m: TestMessage) => boolean },
): Promise<TestMessage | undefined> {
  const { accept, match } = o;
  const found = await waitForMessage(client, {
    ...wait,
    // Without either, the server takes the message for the wait as soon as it is caught.
    match:
      accept || match ? async (m) => (!accept || (await accept(m))) && (!match || match(readMessage(m))) : undefined,
  });
  return found && readMessage(found);
}
