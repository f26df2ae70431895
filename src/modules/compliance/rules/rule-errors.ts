/** One problem in a rule file, located by file and 1-based line. */
export interface RuleIssue {
  file: string;
  line: number;
  rule?: string;
  message: string;
}

export function formatIssue(issue: RuleIssue): string {
  const rule = issue.rule === undefined ? '' : `rule "${issue.rule}": `;
  return `${issue.file}:${issue.line}: ${rule}${issue.message}`;
}

/**
 * Malformed built-in rule content. The service refuses to start with one, so the message names every
 * problem with its file and line (`content/rules/aws/s3.yaml:42: rule "x": severity must be …`).
 */
export class RuleContentError extends Error {
  override name = 'RuleContentError';
  constructor(readonly issues: RuleIssue[]) {
    super(issues.length === 1 ? formatIssue(issues[0]!) : `${issues.length} problems in rule content:\n` + issues.map((i) => '  ' + formatIssue(i)).join('\n'));
  }
}
