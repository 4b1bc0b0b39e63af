// Reading Markdown as a renderer does, for the tests of the docs: its links and its headings' anchors.

/** The anchors a Markdown renderer gives the headings of `text`, as GitHub makes them. */
export function headingSlugs(text: string): string[] {
  return [...text.matchAll(/^#+ (.+)$/gm)].map((m) =>
    m[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-'),
  );
}

/** Every link target of `text` that names no scheme (`docs/api.md#errors`, `#usage`), outside code. */
export function relativeLinks(text: string): string[] {
  const prose = text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)|^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)]
    .map((m) => (m[1] ?? m[2])!)
    .filter((l) => !/^[a-z][a-z0-9+.-]*:/i.test(l));
}
