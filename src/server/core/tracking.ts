import { createHmac } from 'node:crypto';
import type { EmailStore } from '../store/emails.js';
import { safeEqual, type Deps } from './deps.js';
import type { MessageEvents } from './message-events.js';

/**
 * Open and click tracking. Links carry a signed token (message id + target URL) so the click endpoint is no open
 * redirect. One copy of a message goes to all its recipients, so opens and clicks are attributed to its first
 * To recipient.
 */
export function createTracking(deps: Deps & { store: EmailStore; messageEvents: MessageEvents }) {
  const { secrets, store, messageEvents, db } = deps;
  const sign = (payload: string) =>
    createHmac('sha256', secrets.hashKey).update(`track:${payload}`).digest('base64url').slice(0, 22);

  function token(messageId: string, url?: string): string {
    const payload = Buffer.from(JSON.stringify(url ? { m: messageId, u: url } : { m: messageId })).toString(
      'base64url',
    );
    return `${payload}.${sign(payload)}`;
  }

  function read(t: string): { m: string; u?: string } | null {
    const [payload, mac] = t.split('.');
    if (!payload || !mac || !safeEqual(mac, sign(payload))) return null;
    try {
      return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return null;
    }
  }

  function record(messageId: string, type: 'email.opened' | 'email.clicked', detail: Record<string, unknown>): void {
    db.transaction(() => {
      const m = store.get(messageId);
      if (!m) return;
      messageEvents.emit(m, { type, detail, to: m.to_addrs[0] });
    })();
  }

  return {
    /** Rewrites http(s) links of the HTML to the click endpoint and/or appends the open pixel. */
    instrument(html: string, messageId: string, base: string, opts: { opens: boolean; clicks: boolean }): string {
      let out = html;
      if (opts.clicks) {
        out = out.replace(
          /(<a\b[^>]*?\bhref\s*=\s*)(["'])(https?:\/\/[^"']+)\2/gi,
          (_, pre: string, q: string, url: string) => {
            const target = url.replace(/&amp;/g, '&');
            return `${pre}${q}${base}/t/c/${token(messageId, target)}${q}`;
          },
        );
      }
      if (opts.opens) {
        const pixel = `<img src="${base}/t/o/${token(messageId)}" width="1" height="1" alt="" style="display:none">`;
        out = /<\/body>/i.test(out) ? out.replace(/<\/body>/i, `${pixel}</body>`) : out + pixel;
      }
      return out;
    },

    /**
     * The HTML as its author wrote it, from the HTML `instrument` made: each click link this server signed put back to
     * its target, and the open pixel taken out; and the targets that were tracked. Lines stay where they were.
     */
    untrack(html: string): { html: string; tracked: string[] } {
      const tracked = new Set<string>();
      const out = html
        .replace(
          /(<a\b[^>]*?\bhref\s*=\s*)(["'])(https?:\/\/[^"']+?\/t\/c\/([\w-]+\.[\w-]+))\2/gi,
          (whole, pre: string, q: string, _url: string, t: string) => {
            const target = read(t)?.u;
            if (!target) return whole;
            tracked.add(target);
            return `${pre}${q}${target.replace(/&/g, '&amp;')}${q}`;
          },
        )
        .replace(
          /<img src="https?:\/\/[^"]+?\/t\/o\/([\w-]+\.[\w-]+)" width="1" height="1" alt="" style="display:none">/g,
          (whole, t: string) => (read(t) ? '' : whole),
        );
      return { html: out, tracked: [...tracked] };
    },

    /** A click: records `email.clicked` and returns where to redirect, or null for a bad token. */
    click(t: string, ctx: { user_agent: string | null; ip: string }): string | null {
      const p = read(t);
      if (!p?.u) return null;
      record(p.m, 'email.clicked', { url: p.u, user_agent: ctx.user_agent, ip: ctx.ip });
      return p.u;
    },

    /** An open: records `email.opened`; false for a bad token. */
    open(t: string, ctx: { user_agent: string | null; ip: string }): boolean {
      const p = read(t);
      if (!p) return false;
      record(p.m, 'email.opened', { user_agent: ctx.user_agent, ip: ctx.ip });
      return true;
    },
  };
}
export type Tracking = ReturnType<typeof createTracking>;
