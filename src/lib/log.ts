/** A small structured logger: human lines on stderr, or JSON lines on stdout with `json: true`. */
export type LogFields = Record<string, unknown>;

export interface Logger {
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

export function createLogger(opts: { json?: boolean; silent?: boolean } = {}): Logger {
  const write = (level: string, msg: string, fields: LogFields = {}) => {
    if (opts.silent) return;
    if (opts.json) {
      process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`);
      return;
    }
    const rest = Object.entries(fields)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(' ');
    process.stderr.write(`${level.padEnd(5)} ${msg}${rest ? ` ${rest}` : ''}\n`);
  };
  return {
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
  };
}

export const silentLogger: Logger = createLogger({ silent: true });
