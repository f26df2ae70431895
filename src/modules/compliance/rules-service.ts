import { inTenant } from '../../platform/db/scope.js';
import type { Static } from 'typebox';
import type { AppDeps } from '../../deps.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { auditInTenant } from '../../platform/audit/audit-log.js';
import { badRequest, conflict, forbidden, notFound } from '../../platform/http/errors.js';
import { offsetOf, toPage, type PageRequest } from '../../platform/http/pagination.js';
import { json } from '../../platform/db/schema.js';
import { emitEvents } from '../../platform/events/outbox.js';
import { ConditionCompileError, compileCondition } from './rules/cel.js';
import { frameworks } from './frameworks.js';
import { allRules, builtinRule, customRules, generatedFindingDescription, generatedFindingTitle, ruleTouches, type Rule } from './rule-catalog.js';
import type { RuleInput, RuleUpdate } from './schemas.js';
import type { FrameworkId } from './rules/rule-types.js';
import { groupBySourceProblem, toGroupBy } from './rules/group-by.js';
import { checkReadOnly } from './rule-read-only.js';
import { forgetRuleStatus, NEVER_EVALUATED, ruleStatuses, type RuleEvaluationStatus } from './rule-status.js';
import './unknowns/tables.js';

type Deps = Pick<AppDeps, 'database' | 'clock'>;

export function presentRule(rule: Rule, evaluation: RuleEvaluationStatus = NEVER_EVALUATED) {
  return {
    id: rule.id,
    title: rule.title,
    description: rule.description,
    finding_title: rule.finding_title,
    finding_description: rule.finding_description,
    severity: rule.severity,
    resource_type: rule.resource_type,
    framework: rule.framework,
    control_id: rule.control_id,
    framework_mappings: rule.framework_mappings,
    related_mappings: rule.related_mappings,
    nist_controls: rule.definition?.nist_controls ?? [],
    condition: rule.condition,
    remediation: rule.remediation,
    group_by: rule.group_by,
    builtin: rule.builtin,
    terraform_fix_available: Boolean(rule.definition?.terraform),
    evaluation,
    created_at: rule.created_at?.toISOString() ?? null,
    updated_at: rule.updated_at?.toISOString() ?? null,
  };
}

/** A condition that does not compile is the client's mistake: 400 with the compiler's message. */
function checkCondition(condition: string): void {
  try {
    compileCondition(condition);
  } catch (error) {
    if (error instanceof ConditionCompileError) {
      throw badRequest(`condition does not compile: ${error.summary ?? error.message}`, { compiler_message: error.message });
    }
    throw error;
  }
}

/** group_by names exactly one source of the cause; node_type narrows an edge only. */
function checkGroupBy(groupBy: Static<typeof RuleUpdate>['group_by']): void {
  const problem = groupBy ? groupBySourceProblem(groupBy) : null;
  if (problem) throw badRequest(problem);
}

/** A finding title says what is wrong, so it cannot be the rule's own title (the desired state). */
function checkFindingTitle(input: Static<typeof RuleUpdate>): void {
  if (input.finding_title && input.finding_title.trim().toLowerCase() === input.title.trim().toLowerCase()) {
    throw badRequest('finding_title must word the failure ("Bucket is not encrypted"), not repeat title; omit it for "Fails: <title>"', { field: 'finding_title' });
  }
}

function checkControls(input: Static<typeof RuleUpdate>): void {
  for (const m of [{ framework: input.framework, control_id: input.control_id }, ...(input.framework_mappings ?? [])]) {
    if (
      !frameworks()
        .get(m.framework as FrameworkId)
        ?.controls.has(m.control_id)
    ) {
      throw badRequest(`unknown control ${m.control_id} in ${m.framework}`);
    }
  }
}

export function createRulesService(deps: Deps) {
  const db = deps.database.db;

  return {
    async list(context: RequestContext, filter: { framework?: string; resource_type?: string; severity?: string; builtin?: boolean; search?: string }, page: PageRequest) {
      const search = filter.search?.trim().toLowerCase() ?? '';
      const rules = (await allRules(db, context.scope.tenantId)).filter(
        (r) =>
          (!filter.framework || ruleTouches(r, filter.framework)) &&
          (!filter.resource_type || r.resource_type === filter.resource_type) &&
          (!filter.severity || r.severity === filter.severity) &&
          (filter.builtin === undefined || r.builtin === filter.builtin) &&
          (!search || [r.id, r.title, r.description].some((text) => text.toLowerCase().includes(search))),
      );
      const start = offsetOf(page);
      const shown = rules.slice(start, start + page.perPage);
      const statuses = await ruleStatuses(
        db,
        context.scope.tenantId,
        shown.map((r) => r.id),
      );
      return toPage(
        shown.map((r) => presentRule(r, statuses.get(r.id))),
        rules.length,
        page,
      );
    },

    async get(context: RequestContext, id: string) {
      const rule = builtinRule(id) ?? (await customRules(db, context.scope.tenantId)).find((r) => r.id === id);
      if (!rule) throw notFound('rule not found');
      return presentRule(rule, (await ruleStatuses(db, context.scope.tenantId, [id])).get(id));
    },

    async create(context: RequestContext, input: Static<typeof RuleInput>) {
      if (builtinRule(input.id)) throw conflict(`"${input.id}" is the id of a built-in rule`);
      checkCondition(input.condition);
      checkFindingTitle(input);
      checkControls(input);
      checkGroupBy(input.group_by);
      const now = deps.clock.now();
      const exists = await db.selectFrom('custom_rules').select('id').where(inTenant(context.scope.tenantId)).where('id', '=', input.id).executeTakeFirst();
      if (exists) throw conflict(`a custom rule "${input.id}" already exists`);
      await db.transaction().execute(async (trx) => {
        await trx
          .insertInto('custom_rules')
          .values({
            tenant_id: context.scope.tenantId,
            id: input.id,
            ...ruleColumns(input),
            created_by: context.actor.id,
            created_at: now,
            updated_at: now,
          })
          .execute();
        await forgetRuleStatus(trx, context.scope.tenantId, input.id);
        await auditInTenant(trx, deps.clock, context, { action: 'rule.created', targetType: 'rule', targetId: input.id });
      });
      return this.get(context, input.id);
    },

    async update(context: RequestContext, id: string, input: Static<typeof RuleUpdate>) {
      if (builtinRule(id)) throw forbidden('built-in rules are read-only');
      checkCondition(input.condition);
      checkFindingTitle(input);
      checkControls(input);
      checkGroupBy(input.group_by);
      const result = await db.transaction().execute(async (trx) => {
        const stored = await trx
          .selectFrom('custom_rules')
          .select(['id', 'title', 'description', 'created_at', 'updated_at'])
          .where(inTenant(context.scope.tenantId))
          .where('id', '=', id)
          .forUpdate()
          .executeTakeFirst();
        if (!stored) return false;
        checkReadOnly({ id: stored.id, created_at: new Date(stored.created_at), updated_at: new Date(stored.updated_at) }, input);
        await trx
          .updateTable('custom_rules')
          .set({
            ...ruleColumns(input, stored),
            updated_at: deps.clock.now(),
          })
          .where(inTenant(context.scope.tenantId))
          .where('id', '=', id)
          .execute();
        // An update re-enables a suspended rule: it starts afresh, with no runs over budget.
        const reenabled = await forgetRuleStatus(trx, context.scope.tenantId, id);
        await auditInTenant(trx, deps.clock, context, {
          action: 'rule.updated',
          targetType: 'rule',
          targetId: id,
          ...(reenabled ? { details: { reenabled: true } } : {}),
        });
        return true;
      });
      if (!result) throw notFound('rule not found');
      return this.get(context, id);
    },

    /** Deletes a custom rule and resolves its open findings in every workspace of the tenant. */
    async delete(context: RequestContext, id: string) {
      if (builtinRule(id)) throw forbidden('built-in rules are read-only');
      const now = deps.clock.now();
      const deleted = await db.transaction().execute(async (trx) => {
        const result = await trx.deleteFrom('custom_rules').where(inTenant(context.scope.tenantId)).where('id', '=', id).executeTakeFirst();
        if (Number(result.numDeletedRows) === 0) return false;
        await forgetRuleStatus(trx, context.scope.tenantId, id);
        // Its unknown evaluations go with it: no rule is left to leave its controls unknown.
        await trx.deleteFrom('evaluation_unknowns').where(inTenant(context.scope.tenantId)).where('rule_id', '=', id).execute();
        const resolved = await trx
          .updateTable('finding_rows')
          .set({ status: 'resolved', resolved_at: now, resolved_by: 'rule_deleted', updated_at: now })
          .where(inTenant(context.scope.tenantId))
          .where('rule_id', '=', id)
          .where('status', '=', 'open')
          .returning(['id', 'workspace_id', 'resource_id'])
          .execute();
        await emitEvents(
          trx,
          deps.clock,
          resolved.map((f) => ({
            tenantId: context.scope.tenantId,
            workspaceId: f.workspace_id,
            type: 'finding.resolved',
            data: { finding_id: f.id, resolved_at: now.toISOString(), rule_id: id, resource_id: f.resource_id, resolved_by: 'rule_deleted' },
          })),
        );
        await auditInTenant(trx, deps.clock, context, {
          action: 'rule.deleted',
          targetType: 'rule',
          targetId: id,
          details: { findings_resolved: resolved.length },
        });
        return true;
      });
      if (!deleted) throw notFound('rule not found');
    },
  };
}

/**
 * The stored columns of a custom rule's editable fields. A finding text equal to the generated one
 * (for the new or the stored title: PUT takes what GET shows) is stored as null, so the wording keeps
 * following the title instead of freezing the one GET happened to show.
 */
function ruleColumns(input: Static<typeof RuleUpdate>, stored?: { title: string; description: string }) {
  const titles = [input.title, ...(stored ? [stored.title] : [])];
  const generatedTitle = titles.some((t) => input.finding_title === generatedFindingTitle(t));
  const generatedDescription = [[input.title, input.description], ...(stored ? [[stored.title, stored.description]] : [])].some(
    ([t, d]) => input.finding_description === generatedFindingDescription(t!, d!),
  );
  return {
    title: input.title,
    description: input.description,
    finding_title: generatedTitle ? null : (input.finding_title?.trim() ?? null),
    finding_description: generatedDescription ? null : (input.finding_description ?? null),
    severity: input.severity,
    resource_type: input.resource_type,
    framework: input.framework,
    control_id: input.control_id,
    framework_mappings: json(input.framework_mappings ?? []),
    condition: input.condition,
    remediation: json(withOrder(input.remediation)),
    group_by: input.group_by ? json(toGroupBy(input.group_by)) : null,
  };
}

/** Text is the summary with no steps; steps are numbered in the order given. */
function withOrder(remediation: Static<typeof RuleUpdate>['remediation']) {
  if (typeof remediation === 'string') return { summary: remediation, steps: [] };
  return { summary: remediation.summary, steps: remediation.steps.map((s, i) => ({ order: i + 1, action: s.action, command: s.command })) };
}
