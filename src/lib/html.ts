// Text put into HTML: the five characters that could end a text node or an attribute value, as character references.

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}
