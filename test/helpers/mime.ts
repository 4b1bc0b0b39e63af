// Raw MIME messages past the limits of mail readers, written out by hand as a program could send them (CRLF line
// ends, no line starting with a dot): many parts, a huge header block, a huge header block in a part, a huge text.

const head = (subject: string, extra = '') =>
  `From: Exports <exports@example.test>\r\nTo: ops@example.test\r\nSubject: ${subject}\r\n` +
  `Message-ID: <${subject.replace(/\W+/g, '-')}@example.test>\r\nMIME-Version: 1.0\r\n${extra}`;

/** A message of `n` parts under one multipart/mixed: a text part, then `n - 1` small text attachments. */
export function manyParts(n: number, subject = 'many parts'): Buffer {
  const b = 'b0undary-many';
  let out = `${head(subject)}Content-Type: multipart/mixed; boundary="${b}"\r\n\r\n`;
  out += `--${b}\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nThe first part of ${n}.\r\n`;
  for (let i = 1; i < n; i++) {
    out += `--${b}\r\nContent-Type: text/csv; name="row-${i}.csv"\r\nContent-Disposition: attachment; filename="row-${i}.csv"\r\n\r\nrow,${i}\r\n`;
  }
  return Buffer.from(`${out}--${b}--\r\n`);
}

/** A header field `X-Big` whose value is `bytes` long, folded into lines of 76 characters. */
function bigField(bytes: number): string {
  const lines: string[] = [];
  for (let left = bytes; left > 0; left -= 76) lines.push('x'.repeat(Math.min(76, left)));
  return `X-Big: ${lines.join('\r\n ')}\r\n`;
}

/** A plain message whose own header block is more than `bytes` long (a field of that size). */
export function bigHeaderBlock(bytes: number, subject = 'big header block'): Buffer {
  return Buffer.from(`${head(subject, bigField(bytes))}Content-Type: text/plain\r\n\r\nA body.\r\n`);
}

/** A multipart message whose second part (an attachment) has a header block of more than `bytes`. */
export function bigPartHeader(bytes: number, subject = 'big part header'): Buffer {
  const b = 'b0undary-part';
  return Buffer.from(
    `${head(subject)}Content-Type: multipart/mixed; boundary="${b}"\r\n\r\n` +
      `--${b}\r\nContent-Type: text/plain\r\n\r\nSee the attachment.\r\n` +
      `--${b}\r\nContent-Type: text/plain; name="notes.txt"\r\nContent-Disposition: attachment; filename="notes.txt"\r\n` +
      `${bigField(bytes)}\r\nThe notes.\r\n--${b}--\r\n`,
  );
}

/** A text body of about `bytes` (lines of words, the line number in each), quoted-printable, and an HTML part as long. */
export function bigText(bytes: number, subject = 'big text'): Buffer {
  const b = 'b0undary-alt';
  const lines: string[] = [];
  for (let i = 0, n = 0; n < bytes; i++) {
    const line = `line ${i}: caf=C3=A9 total ${i * 7} shipped`;
    lines.push(line);
    n += line.length + 2;
  }
  const text = lines.join('\r\n');
  const html = lines.map((l) => `<p>${l}</p>`).join('\r\n');
  return Buffer.from(
    `${head(subject)}Content-Type: multipart/alternative; boundary="${b}"\r\n\r\n` +
      `--${b}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n${text}\r\n` +
      `--${b}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n${html}\r\n` +
      `--${b}--\r\n`,
  );
}

/** A message of multiparts nested `depth` deep, each the only part of the one above, a text part at the bottom. */
export function nestedParts(depth: number, subject = 'nested parts'): Buffer {
  let out = `${head(subject)}Content-Type: multipart/mixed; boundary="b0"\r\n\r\n`;
  for (let i = 1; i < depth; i++) out += `--b${i - 1}\r\nContent-Type: multipart/mixed; boundary="b${i}"\r\n\r\n`;
  out += `--b${depth - 1}\r\nContent-Type: text/plain\r\n\r\nThe bottom of ${depth}.\r\n`;
  for (let i = depth - 1; i >= 0; i--) out += `--b${i}--\r\n`;
  return Buffer.from(out);
}
