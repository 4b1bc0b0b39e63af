// The severities of the checks' findings (contract/checks.ts), apart from the schemas so that the command line's
// wiring reads them without loading zod.
/** How bad a finding is: `error` the mail is broken for someone, `warning` likely a problem, `notice` worth knowing. */
export const SEVERITIES = ['error', 'warning', 'notice'] as const;
export type Severity = (typeof SEVERITIES)[number];

/**
 * The findings of a report at or above a severity (`error` ⊂ `warning` ⊂ `notice`), in the report's order, each with
 * its check: what `svc inbox check --fail-on` counts.
 */
export function findingsAtOrAbove<F extends { severity: Severity }, Id extends string>(
  report: { checks: readonly { id: Id; findings: readonly F[] }[] },
  severity: Severity,
): (F & { check: Id })[] {
  const rank = SEVERITIES.indexOf(severity);
  return report.checks.flatMap((c) =>
    c.findings.filter((f) => SEVERITIES.indexOf(f.severity) <= rank).map((f) => ({ ...f, check: c.id })),
  );
}
