// `spam`: SpamAssassin's verdict, asked of a `spamd` (`svc serve --spamd HOST:PORT`) over its SPAMC protocol: one
// `REPORT` request with the message, answered with the score and the rules that fired (docs/checks.md#spam).
import { connect } from 'node:net';
import type { CheckFinding } from '../../contract/checks.js';

/** How long spamd has to answer. */
export const SPAMD_TIMEOUT_MS = 30_000;

export interface SpamdAddress {
  host: string;
  port: number;
}

/** `HOST:PORT` (`[::1]:783` for IPv6), or null when it is not one. */
export function parseSpamd(value: string): SpamdAddress | null {
  const m = /^(?:\[([^\]]+)\]|([^:\s]+)):(\d{1,5})$/.exec(value.trim());
  const port = m ? Number(m[3]) : 0;
  if (!m || port < 1 || port > 65535) return null;
  return { host: (m[1] ?? m[2])!, port };
}

export interface SpamVerdict {
  score: number;
  threshold: number;
  spam: boolean;
  rules: { name: string; points: number; description: string }[];
}

/** Sends one SPAMC request and gathers the whole answer. */
function exchange(spamd: SpamdAddress, command: string, raw: Buffer, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(spamd.port, spamd.host);
    const chunks: Buffer[] = [];
    socket.setTimeout(timeoutMs, () =>
      socket.destroy(Object.assign(new Error('no answer in time'), { code: 'ETIMEDOUT' })),
    );
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    // SPAMC/1.5: the command, the body's length, a blank line, the message; then the client half-closes.
    socket.write(`${command} SPAMC/1.5\r\nContent-length: ${raw.length}\r\nUser: svc\r\n\r\n`);
    socket.end(raw);
  });
}

/** Asks spamd for its report of a message. */
export async function askSpamd(spamd: SpamdAddress, raw: Buffer, timeoutMs = SPAMD_TIMEOUT_MS): Promise<SpamVerdict> {
  const answer = await exchange(spamd, 'REPORT', raw, timeoutMs);
  const [head = '', ...rest] = answer.split('\r\n\r\n');
  const status = /^SPAMD\/[\d.]+\s+(\d+)\s+(.*)$/m.exec(head);
  if (!status) throw new Error(`spamd answered something else than SPAMD: ${head.slice(0, 80)}`);
  if (status[1] !== '0') throw new Error(`spamd refused the message: ${status[1]} ${status[2]}`);
  const verdict = /^Spam:\s*(True|False|Yes|No)\s*;\s*(-?[\d.]+)\s*\/\s*(-?[\d.]+)/im.exec(head);
  if (!verdict) throw new Error('spamd answered no score');
  return {
    spam: /^(true|yes)$/i.test(verdict[1] ?? ''),
    score: Number(verdict[2]),
    threshold: Number(verdict[3]),
    rules: reportRules(rest.join('\r\n\r\n')),
  };
}

/**
 * The rules of a report's table (` pts rule name  description`, under a `---- ----` line), a description that goes on
 * over several lines joined into one.
 */
export function reportRules(report: string): SpamVerdict['rules'] {
  const lines = report.split(/\r?\n/);
  const start = lines.findIndex((l) => /^-{3,}\s+-{3,}/.test(l));
  if (start < 0) return [];
  const rules: SpamVerdict['rules'] = [];
  for (const line of lines.slice(start + 1)) {
    const m = /^\s*(-?\d+(?:\.\d+)?)\s+([A-Z0-9_]+)\s+(.*)$/.exec(line);
    if (m) rules.push({ points: Number(m[1]), name: m[2] ?? '', description: (m[3] ?? '').trim() });
    else if (/^\s{5,}\S/.test(line) && rules.length) rules.at(-1)!.description += ` ${line.trim()}`;
    else if (!line.trim()) break;
  }
  return rules;
}

/** The verdict as findings: spam an error, and each rule that added points (a point or more, a warning). */
export function spamFindings(v: SpamVerdict): CheckFinding[] {
  const out: CheckFinding[] = [];
  if (v.spam) {
    out.push({
      severity: 'error',
      rule: 'spam',
      title: `SpamAssassin calls it spam: ${v.score} points of ${v.threshold}`,
      detail:
        'A receiver running SpamAssassin with its default rules would file it as spam. The rules below added the points.',
    });
  }
  for (const r of [...v.rules].sort((a, b) => b.points - a.points)) {
    if (r.points <= 0) continue;
    out.push({
      severity: r.points >= 1 ? 'warning' : 'notice',
      rule: `spamassassin/${r.name}`,
      title: r.description || r.name,
      detail: `${r.name}: ${r.points} points.`,
    });
  }
  return out;
}
