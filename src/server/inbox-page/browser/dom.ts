// The inbox page's DOM helpers, shared by its parts: the page's elements by id, elements built with text nodes only
// (never HTML from a message), and the plain formatting of exact times, sizes, senders, statuses and attachments.

/** The element of the page's shell (pages.ts) with this id. */
export const el = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

/** An element with attributes (false and null ones left out) and children; strings become text, never markup. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | boolean | null | undefined> = {},
  ...children: (Node | string | null | undefined | false)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== false && v != null) node.setAttribute(k, v === true ? '' : v);
  for (const c of children) if (c != null && c !== false) node.append(c);
  return node;
}

/** A timestamp as the page shows it exactly (`2025-01-31 12:00:00 UTC`). */
export const exact = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;

export function size(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** The display name of an address (`"Shop" <orders@example.test>` → `Shop`), else the address. */
export const nameOf = (from: string) => /^\s*"?([^"<]*?)"?\s*<[^>]*>\s*$/.exec(from)?.[1]?.trim() || from;

/** A `/v1` message's status as a badge. */
export const badge = (status: string) => h('span', { class: `badge ${status}` }, status);

/** The paper clip of a message with attachments (the shell's template), with its words for screen readers. */
export const clip = () => {
  const icon = (el<HTMLTemplateElement>('clip').content.firstElementChild as Element).cloneNode(true);
  return h('span', { title: 'Has attachments' }, icon, h('span', { class: 'vh' }, 'has attachments'));
};
