// A caught message as the sandbox serves it over HTTP: its HTML as a document of its own (which can run no script
// and, until the reader allows it, load nothing from elsewhere), and its attachments' bytes as downloads.

/**
 * The policy of a message's HTML document: nothing but inline styles and images carried in the message (data URLs)
 * unless remote content is allowed; never a script (also sandboxed by the header itself, should the document be
 * opened on its own); links open outside the inbox.
 */
export function messageCsp(remote: boolean): string {
  const elsewhere = remote ? ' http: https:' : '';
  return [
    "default-src 'none'",
    `img-src data:${elsewhere}`,
    `style-src 'unsafe-inline'${elsewhere}`,
    `font-src data:${elsewhere}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'self'",
    'sandbox allow-popups allow-popups-to-escape-sandbox',
  ].join('; ');
}

/**
 * The message's HTML as served in the inbox's iframe: links open in a new tab (`<base target>`), and a meta refresh
 * (which would navigate the frame to a remote page even with remote content blocked) is removed.
 */
export function messageDocument(html: string): string {
  const cleaned = html.replace(/<meta\b[^>]*http-equiv\s*=\s*["']?\s*refresh[^>]*>/gi, '');
  const base = '<base target="_blank">';
  // After <head>, else <html>, else the doctype, else first: a tag before the doctype would switch to quirks mode.
  for (const re of [/<head\b[^>]*>/i, /<html\b[^>]*>/i, /<!doctype\b[^>]*>/i]) {
    const m = re.exec(cleaned);
    if (m) return cleaned.slice(0, m.index + m[0].length) + base + cleaned.slice(m.index + m[0].length);
  }
  return base + cleaned;
}

/** Response headers of an attachment download: always a download, never rendered or sniffed as a page of ours. */
export function attachmentHeaders(a: { filename: string | null }, n: number): Record<string, string> {
  const name = a.filename || `attachment-${n}`;
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return {
    'Content-Disposition': `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`,
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'none'; sandbox",
  };
}

/** A media type safe to put in a header: `type/subtype` only (the parameters of a hostile message are dropped). */
export function mediaType(type: string): string {
  return /^[\w.+-]+\/[\w.+-]+$/.test(type) ? type : 'application/octet-stream';
}
