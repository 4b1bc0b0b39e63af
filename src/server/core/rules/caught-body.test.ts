// The views' part limit, on either side of it: a message within the byte limits is read as it is unless it may have
// more than VIEW_PARTS parts, however its lines end and however its parts are nested.
import { describe, expect, it } from 'vitest';
import { OMITTED, readBody, VIEW_PARTS } from './caught-body.js';

const HEAD = 'From: a@example.test\r\nTo: b@example.test\r\nSubject: parts\r\nMIME-Version: 1.0\r\n';

/** A multipart/mixed message of `parts` parts in all (itself and its container count as one): a text, then CSVs. */
function mixed(parts: number, eol = '\r\n'): Buffer {
  const b = 'b0undary';
  let out = `${HEAD}Content-Type: multipart/mixed; boundary="${b}"\r\n\r\n--${b}\r\nContent-Type: text/plain\r\n\r\nfirst\r\n`;
  for (let i = 1; i < parts - 1; i++) {
    out += `--${b}\r\nContent-Type: text/csv\r\nContent-Disposition: attachment; filename="row-${i}.csv"\r\n\r\nrow,${i}\r\n`;
  }
  return Buffer.from(`${out}--${b}--\r\n`.replaceAll('\r\n', eol));
}

/** A message inside a message, `depth` deep (each an inline message/rfc822: every level is a part), the last plain. */
function nested(depth: number): Buffer {
  let out = '';
  for (let i = 0; i < depth; i++) out += `${HEAD}Content-Type: message/rfc822\r\nContent-Disposition: inline\r\n\r\n`;
  return Buffer.from(`${out}${HEAD}Content-Type: text/plain\r\n\r\ninnermost\r\n`);
}

describe('a view of a message of many parts', () => {
  it(`shows all ${VIEW_PARTS} parts, and the first ${VIEW_PARTS} of one more, saying so`, async () => {
    const all = await readBody(mixed(VIEW_PARTS));
    expect(all.omitted).toBe(0);
    expect(all.attachments).toHaveLength(VIEW_PARTS - 2);
    const cut = await readBody(mixed(VIEW_PARTS + 1));
    expect(cut.omitted).toBe(OMITTED.parts);
    expect(cut.attachments).toHaveLength(VIEW_PARTS - 2);
  });

  it('counts them the same when lines end in LF alone', async () => {
    expect((await readBody(mixed(VIEW_PARTS, '\n'))).omitted).toBe(0);
    const cut = await readBody(mixed(VIEW_PARTS + 1, '\n'));
    expect(cut.omitted).toBe(OMITTED.parts);
    expect(cut.attachments).toHaveLength(VIEW_PARTS - 2);
  });

  it('counts each message inside a message as a part, with no boundary between them', async () => {
    const shallow = await readBody(nested(3));
    expect(shallow.omitted).toBe(0);
    expect(shallow.text).toMatch(/\ninnermost\n$/);
    expect((await readBody(nested(VIEW_PARTS + 20))).omitted & OMITTED.parts).toBe(OMITTED.parts);
  });
});
