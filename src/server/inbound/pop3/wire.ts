// The bytes of POP3 (RFC 1939): the command lines a client sends, read with a cap on their length, and the multi-line
// responses the server sends, dot-stuffed as they are written (section 3): a line of the message starting with "." gets
// one more, every line ends in CRLF, and "." alone ends the response.

const CR = 0x0d;
const LF = 0x0a;
const DOT = 0x2e;
const DOT_BYTE = Buffer.from('.');
const LF_BYTE = Buffer.from('\n');
const CRLF = Buffer.from('\r\n');

/** The longest command line, CRLF included (RFC 2449 section 4: 255 octets). */
export const MAX_COMMAND_LINE = 255;
/**
 * The longest line read at all: a SASL response (RFC 5034 section 4: not bound by the 255 octets) or an over-long
 * command, answered -ERR. A client that sends more without a line end is disconnected, so it cannot grow memory.
 */
export const MAX_LINE = 16 * 1024;

/**
 * Splits what a client sends into lines (LF or CRLF ended, without the line end), as latin1 text: each byte one char.
 * `overflow()` says whether the unfinished line is past MAX_LINE.
 */
export function lineReader() {
  let pending = '';
  return {
    push(chunk: Buffer): void {
      pending += chunk.toString('latin1');
    },
    /** The next complete line, or null. */
    next(): string | null {
      const lf = pending.indexOf('\n');
      if (lf === -1) return null;
      const line = pending.slice(0, lf);
      pending = pending.slice(lf + 1);
      return line.endsWith('\r') ? line.slice(0, -1) : line;
    },
    /** Whether the bytes after the last line end are more than a line may be. */
    overflow: () => pending.length > MAX_LINE && pending.indexOf('\n') === -1,
    /** Forgets what is unread (after STLS: nothing sent in the clear may count after it, RFC 2595 section 3.1). */
    clear(): void {
      pending = '';
    },
  };
}

/**
 * A message's bytes as the body of a multi-line response, fed in pieces: a line starting with "." gets another (byte
 * stuffing), a bare LF becomes CRLF (the sink keeps what SMTP handed it, which ends lines in CRLF; this only guards a
 * message that did not), and `end()` closes the last line if it was open and adds the terminating ".".
 */
export function dotStuffer() {
  let lineStart = true;
  let lastCR = false;
  return {
    push(chunk: Buffer): Buffer {
      const parts: Buffer[] = [];
      let i = 0;
      while (i < chunk.length) {
        if (lineStart && chunk[i] === DOT) parts.push(DOT_BYTE);
        lineStart = false;
        const lf = chunk.indexOf(LF, i);
        if (lf === -1) {
          parts.push(chunk.subarray(i));
          lastCR = chunk[chunk.length - 1] === CR;
          break;
        }
        const line = chunk.subarray(i, lf);
        const crBefore = line.length > 0 ? line[line.length - 1] === CR : lastCR;
        if (line.length > 0) parts.push(line);
        parts.push(crBefore ? LF_BYTE : CRLF);
        lineStart = true;
        lastCR = false;
        i = lf + 1;
      }
      return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    },
    end(): Buffer {
      if (lineStart) return Buffer.from('.\r\n');
      return Buffer.from(lastCR ? '\n.\r\n' : '\r\n.\r\n');
    },
  };
}

/**
 * What TOP sends (RFC 1939 section 7): the header block, the blank line after it and the first `lines` lines of the
 * body; the whole message when it has fewer, or no body.
 */
export function topOf(raw: Buffer, lines: number): Buffer {
  let i = 0;
  // The header block: up to and including the first empty line.
  for (;;) {
    const lf = raw.indexOf(LF, i);
    if (lf === -1) return raw;
    const empty = lf === i || (lf === i + 1 && raw[i] === CR);
    i = lf + 1;
    if (empty) break;
  }
  for (let n = 0; n < lines; n++) {
    const lf = raw.indexOf(LF, i);
    if (lf === -1) return raw;
    i = lf + 1;
  }
  return raw.subarray(0, i);
}

/**
 * A message number argument (RFC 1939 section 3: a decimal number): the number, or null for anything else ("1x",
 * "-1", "+1", " ", a number of more digits than any maildrop has).
 */
export function messageNumber(arg: string | undefined): number | null {
  if (arg === undefined || !/^\d{1,9}$/.test(arg)) return null;
  return Number(arg);
}
