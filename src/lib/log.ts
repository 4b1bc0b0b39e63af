/** A small structured logger: human lines on stderr, or JSON lines on stdout with `json: true`. */
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A word plain enough to stand in a line as it is: printable ASCII without spaces, quotes or backslashes. */
const PLAIN = /^[!#-[\]-~]*$/;
/** What JSON leaves as it is but a terminal acts on: DEL, the C1 controls, line and paragraph separators. */
const UNSAFE = /[\u007f-\u009f\u2028\u2029]/g;

/**
 * A value in a human log line: as it is when plain, else quoted with its control characters escaped, so that text a
 * client sent (a request's path, an SMTP command) can neither start a line of its own nor reach the terminal as an
 * escape sequence.
 */
function shown(v: string): string {
  if (PLAIN.test(v)) return v;
  return JSON.stringify(v).replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `level`: the least a line must be to be written (default `info`: no debug lines). */
export function createLogger(opts: { json?: boolean; silent?: boolean; level?: LogLevel } = {}): Logger {
  const least = LOG_LEVELS.indexOf(opts.level ?? 'info');
  const write = (level: LogLevel, msg: string, fields: LogFields = {}) => {
    if (opts.silent || LOG_LEVELS.indexOf(level) < least) return;
    if (opts.json) {
      process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`);
      return;
    }
    const rest = Object.entries(fields)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? shown(v) : JSON.stringify(v)}`)
      .join(' ');
    process.stderr.write(`${level.padEnd(5)} ${msg}${rest ? ` ${rest}` : ''}\n`);
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
  };
}

export const silentLogger: Logger = createLogger({ silent: true });
