/**
 * A human summary of an event, shared by the chat, ticket, incident and e-mail formatters: a title,
 * a severity when the event has one, a few facts and a longer text.
 */
export interface Envelope {
  id: string;
  type: string;
  tenant_id: string;
  workspace_id?: string | null;
  timestamp: string;
  data: Record<string, unknown>;
}

export interface EventSummary {
  title: string;
  severity: string | null;
  facts: Array<[string, string]>;
  text: string;
  /** The finding the event is about, when there is one. */
  findingId: string | null;
}

const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const str = (v: unknown): string => (v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));

function facts(pairs: Array<[string, unknown]>): Array<[string, string]> {
  return pairs.filter(([, v]) => v !== undefined && v !== null && v !== '').map(([k, v]) => [k, str(v)]);
}

function findingSummary(prefix: string, finding: Record<string, unknown>, extra: Array<[string, unknown]> = []): EventSummary {
  const resource = finding.resource_name && finding.resource_name !== finding.resource_id ? `${str(finding.resource_name)} (${str(finding.resource_id)})` : finding.resource_id;
  // The finding title words the failure for the rule ("RDS DB instance storage is not encrypted");
  // a one-line title (e-mail subject, chat header, ticket summary) also names the resource, so two
  // tickets of one rule are told apart.
  const named = str(finding.resource_name || finding.resource_id);
  return {
    title: `${prefix}: ${str(finding.severity)} ${str(finding.title)}${named ? ` (${named})` : ''}`.trim(),
    severity: finding.severity ? str(finding.severity) : null,
    facts: facts([
      ['Severity', finding.severity],
      ['Resource', resource],
      ['Resource type', finding.resource_type],
      ['Region', finding.region],
      ['Control', finding.framework ? `${str(finding.framework)} ${str(finding.control_id)}` : undefined],
      ['Rule', finding.rule_id],
      ['Finding', finding.id],
      ...extra,
    ]),
    text: [str(finding.description), finding.remediation ? `Remediation: ${str(finding.remediation)}` : ''].filter(Boolean).join('\n\n'),
    findingId: finding.id ? str(finding.id) : null,
  };
}

export function summarize(event: Envelope): EventSummary {
  const d = event.data;
  const findingId = d.finding_id ? str(d.finding_id) : null;
  switch (event.type) {
    case 'finding.created':
      return findingSummary('New finding', obj(d.finding));
    case 'finding.reopened':
      return findingSummary('Finding reopened', obj(d.finding), [['Reopened at', d.reopened_at]]);
    case 'finding.sla_breached':
      return findingSummary('Finding overdue', obj(d.finding), [['Due at', d.due_at]]);
    case 'finding.resolved':
      return {
        title: `Finding resolved: ${findingId ?? ''}`,
        severity: null,
        facts: facts([
          ['Finding', d.finding_id],
          ['Resource', d.resource_id],
          ['Rule', d.rule_id],
          ['Resolved at', d.resolved_at],
          ['Resolved by', d.resolved_by],
        ]),
        text: '',
        findingId,
      };
    case 'finding.severity_changed':
      return {
        title: `Finding severity changed from ${str(d.previous_severity)} to ${str(d.severity)}: ${findingId ?? ''}`,
        severity: d.severity ? str(d.severity) : null,
        facts: facts([
          ['Finding', d.finding_id],
          ['Resource', d.resource_id],
          ['Previous severity', d.previous_severity],
          ['Severity', d.severity],
          ['Reason', d.reason],
        ]),
        text: '',
        findingId,
      };
    case 'finding.risk_accepted':
      return {
        title: `Risk accepted: ${findingId ?? ''}`,
        severity: null,
        facts: facts([
          ['Finding', d.finding_id],
          ['Owner', d.owner],
          ['Reason', d.reason],
          ['Expires at', d.expires_at],
          ['Scope', d.scope],
        ]),
        text: '',
        findingId,
      };
    case 'finding.risk_acceptance_ended':
      return {
        title: `Risk acceptance ended (${str(d.reason)}): ${findingId ?? ''}`,
        severity: null,
        facts: facts([
          ['Finding', d.finding_id],
          ['Reason', d.reason],
          ['Ended at', d.ended_at],
        ]),
        text: '',
        findingId,
      };
    case 'compliance.score_changed': {
      const delta = Number(d.delta);
      return {
        title: `Compliance score of ${str(d.framework)} changed from ${str(d.previous_score)} to ${str(d.current_score)} (${delta > 0 ? '+' : ''}${str(d.delta)})`,
        severity: null,
        facts: facts([
          ['Framework', d.framework],
          ['Previous score', d.previous_score],
          ['Current score', d.current_score],
          ['New failures', d.new_failures],
          ['New passes', d.new_passes],
          ['Audit run', d.triggered_by],
        ]),
        text: '',
        findingId: null,
      };
    }
    default:
      return summarizeOther(event);
  }
}

/** Everything but the finding events: controls, assessments, attestations, schedules, jobs, reports, tests. */
function summarizeOther(event: Envelope): EventSummary {
  const d = event.data;
  const findingId = d.finding_id ? str(d.finding_id) : null;
  switch (event.type) {
    case 'compliance.control_failed':
    case 'compliance.control_passed':
      return {
        title: `Control ${event.type === 'compliance.control_failed' ? 'now failing' : 'now passing'}: ${str(d.framework)} ${str(d.control_id)} ${str(d.title)}`.trim(),
        severity: null,
        facts: facts([
          ['Framework', d.framework],
          ['Control', d.control_id],
          ['Title', d.title],
          ['Audit run', d.triggered_by],
        ]),
        text: '',
        findingId: null,
      };
    case 'assessment.assigned':
    case 'assessment.submitted':
    case 'assessment.approved':
    case 'assessment.changes_requested': {
      const what = {
        'assessment.assigned': 'assigned',
        'assessment.submitted': 'submitted',
        'assessment.approved': 'approved',
        'assessment.changes_requested': 'changes requested',
      }[event.type];
      return {
        title: `Assessment ${what}: ${str(d.questionnaire_title)}`,
        severity: null,
        facts: facts([
          ['Assessment', d.assessment_id],
          ['Questionnaire', d.questionnaire_title],
          ['Assignee', d.assignee_id],
          ['Reviewer', d.reviewer_id],
          ['Due date', d.due_date],
          ['Attested until', d.attestation_expires_at],
        ]),
        text: str(d.notes),
        findingId: null,
      };
    }
    case 'attestation.expiring':
    case 'attestation.expired': {
      const controls = Array.isArray(d.controls)
        ? d.controls.map((c) => (typeof c === 'object' && c ? `${str(obj(c).framework)} ${str(obj(c).control_id)}` : str(c))).join(', ')
        : '';
      const expiring = event.type === 'attestation.expiring';
      return {
        title: expiring ? `Attestation expires in ${str(d.days_before)} days: ${str(d.questionnaire_title)}` : `Attestation expired: ${str(d.questionnaire_title)}`,
        severity: null,
        facts: facts([
          ['Questionnaire', d.questionnaire_title],
          ['Assessment', d.assessment_id],
          [expiring ? 'Expires at' : 'Expired at', expiring ? d.expires_at : d.expired_at],
          ['Level', d.level],
          ['Owner', obj(d.owner).username],
          ['Controls', controls],
        ]),
        text: '',
        findingId: null,
      };
    }
    case 'schedule.run_finished': {
      const schedule = obj(d.schedule);
      const run = obj(d.run);
      return {
        title: `Scheduled ${str(schedule.kind)} ${str(run.status)}: ${str(schedule.name)}`,
        severity: null,
        facts: facts([
          ['Schedule', schedule.id],
          ['Status', run.status],
          ['Due at', run.due_at],
          ['Finished at', run.finished_at],
          ['Job', run.job_url],
        ]),
        text: str(run.error),
        findingId: null,
      };
    }
    case 'integration.test':
      return {
        title: 'Test message from ControlGraph',
        severity: null,
        facts: facts([
          ['Integration', d.integration_id],
          ['Requested by', d.requested_by],
        ]),
        text: str(d.message),
        findingId: null,
      };
    default: {
      const job = obj(d.job);
      const report = obj(d.report);
      if (event.type.startsWith('job.') && Object.keys(job).length) {
        return {
          title: `Job ${event.type.slice(4)}: ${str(job.name ?? job.id)}`,
          severity: null,
          facts: facts([
            ['Job', job.id],
            ['Status', job.status],
            ['Started at', job.started_at],
            ['Completed at', job.completed_at],
          ]),
          text: '',
          findingId: null,
        };
      }
      if (event.type.startsWith('report.') && Object.keys(report).length) {
        return {
          title: `Report ${event.type.slice(7)}: ${str(report.type ?? report.id)}`,
          severity: null,
          facts: facts([
            ['Report', report.id],
            ['Framework', report.framework],
            ['Format', report.format],
            ['Download', report.download_url],
          ]),
          text: '',
          findingId: null,
        };
      }
      const scalars = Object.entries(d).filter(([, v]) => typeof v !== 'object' || v === null) as Array<[string, unknown]>;
      return { title: `ControlGraph event ${event.type}`, severity: null, facts: facts(scalars.slice(0, 10)), text: '', findingId };
    }
  }
}
