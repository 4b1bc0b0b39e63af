// html-validate over the message's HTML, once, with the rules that make sense for email: the HTML standard's (less
// the attributes email is still written with: bgcolor, align, cellpadding…) for the content check, and its
// accessibility rules for the accessibility check (less missing alt text, which the content check reports itself).
import { HtmlValidate, StaticConfigLoader, type Message } from 'html-validate';
import type { CheckFinding } from '../../contract/checks.js';
import { withinDepth } from './markup.js';
import { attempt, type Outcome } from './outcome.js';

/** What html-validate found, for the content and accessibility checks. */
export type Validation = Outcome<{ invalid: CheckFinding[]; accessibility: CheckFinding[] }>;

/** The rules of html-validate's accessibility presets that are reported by the accessibility check. */
const A11Y_RULES = new Set([
  'area-alt',
  'aria-hidden-body',
  'aria-label-misuse',
  'empty-heading',
  'empty-title',
  'heading-level',
  'hidden-focusable',
  'meta-refresh',
  'multiple-labeled-controls',
  'no-abstract-role',
  'no-autoplay',
  'no-redundant-aria-label',
  'no-redundant-for',
  'text-content',
  'wcag/h30',
  'wcag/h32',
  'wcag/h36',
  'wcag/h63',
  'wcag/h67',
  'wcag/h71',
]);

let validator: HtmlValidate | undefined;
const get = () =>
  (validator ??= new HtmlValidate(
    new StaticConfigLoader({
      root: true,
      extends: ['html-validate:standard', 'html-validate:a11y', 'html-validate:document'],
      rules: {
        // Email is written with them (bgcolor, align, cellpadding, <center>), and its clients need them.
        'no-deprecated-attr': 'off',
        deprecated: 'warn',
        // The content check's img-alt-missing, with the image's place.
        'wcag/h37': 'off',
        // role="presentation" on layout tables is what email needs; a link styled as a button is no <button>.
        'no-redundant-role': 'off',
        'prefer-native-element': 'off',
        'no-implicit-button-type': 'off',
        'input-missing-label': 'off',
        'require-sri': 'off',
        'no-missing-references': 'off',
        'missing-doctype': 'off',
        'doctype-html': 'off',
        // Landmarks (<main>, <nav>) are rare in email and this rule costs the most of all on a long message; the
        // other only warns about this configuration.
        'unique-landmark': 'off',
        'deprecated-rule': 'off',
      },
    }),
  ));

/** html-validate's messages as findings, one per rule and message with its first place and how often it occurs. */
function findings(messages: Message[], severity: (m: Message) => CheckFinding['severity']): CheckFinding[] {
  const byKey = new Map<string, CheckFinding>();
  for (const m of messages) {
    const key = `${m.ruleId}\u0000${m.message}`;
    const f = byKey.get(key);
    if (f) {
      f.occurrences = (f.occurrences ?? 1) + 1;
      continue;
    }
    byKey.set(key, {
      severity: severity(m),
      rule: `html-validate/${m.ruleId}`,
      title: m.message,
      line: m.line,
      column: m.column,
      ...(m.ruleUrl ? { docs_url: m.ruleUrl } : {}),
    });
  }
  return [...byKey.values()];
}

/** The HTML's invalid markup (content) and accessibility problems, as html-validate finds them. */
export function validateHtml(html: string): { invalid: CheckFinding[]; accessibility: CheckFinding[] } {
  const report = get().validateStringSync(html);
  const messages = report.results.flatMap((r) => r.messages);
  return {
    invalid: findings(
      messages.filter((m) => !A11Y_RULES.has(m.ruleId)),
      (m) => (m.severity === 2 ? 'warning' : 'notice'),
    ),
    accessibility: findings(
      messages.filter((m) => A11Y_RULES.has(m.ruleId)),
      () => 'warning',
    ),
  };
}

/** html-validate over the HTML, as an outcome (null without HTML). */
export function validation(html: string | null): Validation | null {
  // The validator reads the HTML as far as the other checks do (markup.ts): deeper nesting is their finding.
  return html === null ? null : attempt(() => validateHtml(withinDepth(html).html));
}
