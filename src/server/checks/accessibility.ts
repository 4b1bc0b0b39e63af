// `accessibility`: what a screen reader or a reader who navigates by links and headings meets in the HTML — its
// language and link text that says where a link goes; html-validate's accessibility rules (validator.ts) are added
// to these. Nothing here needs a browser: colour contrast, which does, is not judged.
import type { CheckFinding } from '../../contract/checks.js';
import { type Markup, collapse, placeOf, textOf } from './markup.js';

/** Link text that says nothing of where the link goes, out of its sentence (WCAG 2.4.4). */
const VAGUE = /^(click here|here|click|read more|more|learn more|this|link|this link|go|details)$/i;

export function accessibilityFindings(m: Markup): CheckFinding[] {
  const out: CheckFinding[] = [];
  const html = m.elements.find((e) => e.name === 'html');
  if (!html?.attribs.lang?.trim()) {
    out.push({
      severity: 'warning',
      rule: 'html-lang-missing',
      title: 'The language is not given',
      detail:
        'Without <html lang="…"> a screen reader reads the message in its own default language and voice (WCAG 3.1.1).',
      ...(html ? placeOf(m, html) : {}),
    });
  }
  const vague = m.elements.filter((e) => e.name === 'a' && VAGUE.test(collapse(textOf(e))));
  const [first] = vague;
  if (first) {
    out.push({
      severity: 'notice',
      rule: 'link-text-vague',
      title: `A link says only "${collapse(textOf(first))}"`,
      detail:
        'Screen reader users often go through a message by its links alone: say where the link goes ("View your ' +
        'order" rather than "click here", WCAG 2.4.4).',
      ...placeOf(m, first),
      ...(vague.length > 1 ? { occurrences: vague.length } : {}),
    });
  }
  return out;
}
