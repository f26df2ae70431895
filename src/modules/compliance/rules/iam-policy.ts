import { readFileSync } from 'node:fs';
import { projectPath } from '../../../platform/paths.js';

/**
 * IAM policy documents as rule conditions read them (content/rules/README.md, "IAM policy documents").
 *
 * AWS Config and IAM's API give a policy document as a URL-encoded JSON string; the CLI, recordings
 * of it and hand-written fixtures give the JSON itself or its object. `parsePolicy` takes all three
 * and returns the statements normalised, so a condition never has to ask which form a field took:
 * `Action`, `NotAction`, `Resource`, `NotResource` are always lists, `Principal` always a map of
 * lists (`"*"` is `{AWS: ["*"]}`, which IAM treats the same), `Condition` always a map.
 *
 * The judgements (`isAdministrative`, `privilegeEscalations`, `serviceWildcards`, `mfaUnprotected`)
 * follow Prowler's IAM library (prowler/providers/aws/services/iam/lib/policy.py and
 * privilege_escalation.py at the commit the rules cite) where one exists, with the differences each
 * one names. They judge one document alone: what other policies of the same principal allow or deny
 * (a permissions boundary, an SCP) is not known here.
 *
 * There is no permissively licensed npm library for this (the IAM policy parsers and action
 * expanders on npm are AGPL-3.0), so the matching is written here: action and resource patterns are
 * IAM's globs (`*` any run of characters, `?` one), actions compared case-insensitively as IAM does.
 */

export interface PolicyStatement {
  sid: string;
  effect: 'Allow' | 'Deny';
  action: string[];
  notAction: string[];
  resource: string[];
  notResource: string[];
  principal: Principals;
  notPrincipal: Principals;
  /** As written: operator → condition key → value(s). Empty when the statement has none (or `{}`). */
  condition: Record<string, Record<string, unknown>>;
}

export interface Principals {
  AWS: string[];
  Service: string[];
  Federated: string[];
  CanonicalUser: string[];
}

export class PolicyDocumentError extends Error {
  override name = 'PolicyDocumentError';
}

// A few hundred distinct documents are typical of an account; an audit reads each several times.
const parsed = new Map<string, PolicyStatement[]>();
const CACHE_LIMIT = 2000;

/** The statements of a policy document (URL-encoded JSON, JSON text, or the object); throws PolicyDocumentError. */
export function parsePolicy(doc: unknown): PolicyStatement[] {
  if (typeof doc !== 'string') return normalise(doc);
  let statements = parsed.get(doc);
  if (statements) return statements;
  statements = normalise(decode(doc));
  if (parsed.size >= CACHE_LIMIT) parsed.clear();
  parsed.set(doc, statements);
  return statements;
}

function decode(text: string): unknown {
  const trimmed = text.trim();
  let json = trimmed;
  if (!trimmed.startsWith('{')) {
    try {
      json = decodeURIComponent(trimmed);
    } catch {
      throw new PolicyDocumentError('policy document is neither JSON nor URL-encoded JSON');
    }
  }
  try {
    return JSON.parse(json);
  } catch (error) {
    throw new PolicyDocumentError(`policy document is not JSON: ${(error as Error).message}`);
  }
}

function normalise(doc: unknown): PolicyStatement[] {
  if (!isObject(doc)) throw new PolicyDocumentError(doc === null || doc === undefined ? 'no policy document' : 'policy document is not a JSON object');
  const raw = doc.Statement;
  if (raw === undefined) throw new PolicyDocumentError('policy document has no Statement');
  const list = Array.isArray(raw) ? raw : [raw];
  return list.map((s, i) => statement(s, i + 1));
}

function statement(s: unknown, n: number): PolicyStatement {
  if (!isObject(s)) throw new PolicyDocumentError(`statement ${n} is not an object`);
  if (s.Effect !== 'Allow' && s.Effect !== 'Deny') throw new PolicyDocumentError(`statement ${n}: Effect must be Allow or Deny`);
  return {
    sid: typeof s.Sid === 'string' ? s.Sid : '',
    effect: s.Effect,
    action: strings(s.Action),
    notAction: strings(s.NotAction),
    resource: strings(s.Resource),
    notResource: strings(s.NotResource),
    principal: principals(s.Principal),
    notPrincipal: principals(s.NotPrincipal),
    condition: isObject(s.Condition) ? (s.Condition as PolicyStatement['condition']) : {},
  };
}

function strings(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  return (Array.isArray(value) ? value : [value]).map(String);
}

function principals(value: unknown): Principals {
  const out: Principals = { AWS: [], Service: [], Federated: [], CanonicalUser: [] };
  if (value === '*') out.AWS.push('*');
  else if (isObject(value)) for (const key of Object.keys(out) as Array<keyof Principals>) out[key] = strings(value[key]);
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

// ---------------------------------------------------------------------------------------------
// Matching

const globs = new Map<string, RegExp>();

/** IAM's glob: `*` any run of characters, `?` exactly one; actions are case-insensitive. */
export function globMatches(pattern: string, value: string): boolean {
  let re = globs.get(pattern);
  if (!re) {
    re = new RegExp(
      `^${pattern
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.')}$`,
      'is',
    );
    if (globs.size >= CACHE_LIMIT) globs.clear();
    globs.set(pattern, re);
  }
  return re.test(value);
}

/**
 * Every action `wanted` stands for is one `pattern` covers. `wanted` is an action or a pattern
 * (`iam:Put*`): its `*` is read literally, which `pattern`'s `*` matches, so `iam:*` covers
 * `iam:Put*` and `iam:Put*` does not cover `iam:*`.
 */
const covers = (pattern: string, wanted: string) => globMatches(pattern, wanted);
/** Some action is both `a` and `b` (approximated by one covering the other). */
const overlaps = (a: string, b: string) => covers(a, b) || covers(b, a);

/** The statement's Action or NotAction reaches every action of `wanted`. */
function grantsAll(s: PolicyStatement, wanted: string): boolean {
  if (s.action.some((p) => covers(p, wanted))) return true;
  return s.notAction.length > 0 && !s.notAction.some((p) => overlaps(p, wanted));
}

/** The statement's Action or NotAction reaches some action of `wanted`. */
function grantsSome(s: PolicyStatement, wanted: string): boolean {
  if (s.action.some((p) => overlaps(p, wanted))) return true;
  return s.notAction.length > 0 && !s.notAction.some((p) => covers(p, wanted));
}

const hasCondition = (s: PolicyStatement) => Object.keys(s.condition).length > 0;
/** Every resource: `"*"` (or Prowler's other spellings of it), or a NotResource that leaves some out. */
const everyResource = (s: PolicyStatement) => s.resource.some((r) => r === '*' || r === '*:*' || r === '*/*') || (s.notResource.length > 0 && !s.notResource.includes('*'));

/**
 * A resource pattern that reaches resources of others: `*`, or a pattern with a wildcard (a role
 * path `role/*`, a name prefix `policy/app-*`), unless it is bound to the caller by a policy variable
 * (`user/${aws:username}`) or names AWS's own account (`arn:aws:iam::aws:policy/*`: AWS-managed
 * policies, which no customer can change).
 */
function reachesOthers(resource: string): boolean {
  if (resource === '*') return true;
  if (!resource.includes('*') || resource.includes('${')) return false;
  return resource.split(':')[4] !== 'aws';
}
const broad = (s: PolicyStatement) => s.notResource.length > 0 || s.resource.some(reachesOthers);

/** A Deny that always applies to every resource: one with a Condition may not apply. */
const firmDeny = (s: PolicyStatement) => s.effect === 'Deny' && !hasCondition(s) && everyResource(s);

/** The document allows every action of `wanted` on resources of others and no firm Deny takes any of it back. */
function allowsBroadly(statements: PolicyStatement[], wanted: string): boolean {
  if (statements.some((s) => firmDeny(s) && grantsSome(s, wanted))) return false;
  return statements.some((s) => s.effect === 'Allow' && broad(s) && grantsAll(s, wanted));
}

// ---------------------------------------------------------------------------------------------
// Judgements

/**
 * Each judgement of a document once: parsePolicy hands out one statement list per distinct document
 * text, and an audit judges the same documents for every rule and at every run (escalation alone
 * tries a hundred permission sets).
 */
const judged = new WeakMap<PolicyStatement[], Map<string, unknown>>();
function memo<T>(doc: unknown, name: string, judge: (statements: PolicyStatement[]) => T): T {
  const statements = parsePolicy(doc);
  let results = judged.get(statements);
  if (!results) judged.set(statements, (results = new Map()));
  if (!results.has(name)) results.set(name, judge(statements));
  return results.get(name) as T;
}

/**
 * Administrative "*:*" privileges (Prowler's check_admin_access): an Allow of every action on every
 * resource, or an Allow of NotAction on every resource (everything except a few actions). Unlike
 * Prowler, a NotAction that leaves out all of IAM (`iam:*`, as AWS's PowerUserAccess does) is not
 * administrative, since it cannot grant itself more, and neither is a document whose firm Deny takes
 * all of IAM back. Conditions are not evaluated, as in Prowler: an Allow of "*:*" with a Condition is
 * still administrative for whoever meets it.
 */
export function isAdministrative(doc: unknown): boolean {
  return memo(doc, 'isAdministrative', (statements) => isAdministrativeOf(statements));
}

function isAdministrativeOf(statements: PolicyStatement[]): boolean {
  if (statements.some((s) => firmDeny(s) && grantsAll(s, 'iam:*'))) return false;
  return statements.some((s) => {
    if (s.effect !== 'Allow' || !everyResource(s)) return false;
    if (s.action.some((a) => a === '*' || a === '*:*')) return true;
    return s.notAction.length > 0 && !s.notAction.some((p) => covers(p, 'iam:*'));
  });
}

interface EscalationData {
  paths: Record<string, string[]>;
  additions: Record<string, string[]>;
}
let escalationPaths: Array<[string, string[]]> | undefined;

function escalations(): Array<[string, string[]]> {
  if (!escalationPaths) {
    const data = JSON.parse(readFileSync(projectPath('content', 'aws-iam', 'privilege-escalation.json'), 'utf8')) as EscalationData;
    escalationPaths = [...Object.entries(data.paths), ...Object.entries(data.additions)];
  }
  return escalationPaths;
}

/**
 * The privilege-escalation permission sets the document grants (content/aws-iam/privilege-escalation.json:
 * Prowler's list, and iam:PassRole alone), by name. A set counts when every one of its actions is
 * allowed on resources of others (see reachesOthers) and no firm Deny takes it back. Prowler counts
 * a grant whatever its resource; here a grant bound to the caller's own user or to named resources
 * does not count, so AWS's own self-service policies (iam:CreateAccessKey on `user/${aws:username}`)
 * are not escalation. Conditions are not evaluated, as in Prowler.
 */
export function privilegeEscalations(doc: unknown): string[] {
  return memo(doc, 'privilegeEscalations', (statements) => privilegeEscalationsOf(statements));
}

function privilegeEscalationsOf(statements: PolicyStatement[]): string[] {
  const granted = new Map<string, boolean>();
  const allows = (action: string) => {
    let yes = granted.get(action);
    if (yes === undefined) granted.set(action, (yes = allowsBroadly(statements, action)));
    return yes;
  };
  return escalations()
    .filter(([, actions]) => actions.every(allows))
    .map(([name]) => name);
}

/**
 * The services of which the document allows every action on every resource (`s3:*` on `*`): AWS
 * Config's iam-policy-no-statements-with-full-access and Security Hub IAM.21; Prowler's
 * check_full_service_access for one service. `*` itself (every service) is isAdministrative's case and
 * is not listed; a NotAction Allow is isAdministrative's too. A service is not listed when a firm Deny
 * takes back any of its actions.
 */
export function serviceWildcards(doc: unknown): string[] {
  return memo(doc, 'serviceWildcards', (statements) => serviceWildcardsOf(statements));
}

function serviceWildcardsOf(statements: PolicyStatement[]): string[] {
  const services = new Set<string>();
  for (const s of statements) {
    if (s.effect !== 'Allow' || !everyResource(s)) continue;
    for (const a of s.action) {
      const m = /^([A-Za-z0-9-]+):\*$/.exec(a);
      if (m) services.add(m[1]!.toLowerCase());
    }
  }
  return [...services].filter((svc) => !statements.some((s) => firmDeny(s) && grantsSome(s, `${svc}:*`))).sort();
}

let sensitiveActions: string[] | undefined;
function mfaSensitive(): string[] {
  sensitiveActions ??= (JSON.parse(readFileSync(projectPath('content', 'aws-iam', 'mfa-sensitive-actions.json'), 'utf8')) as { actions: string[] }).actions;
  return sensitiveActions;
}

const MFA_KEYS = ['aws:multifactorauthpresent', 'aws:multifactorauthage'];

/** The condition block tests MFA: a key aws:MultiFactorAuthPresent or aws:MultiFactorAuthAge (keys are case-insensitive). */
function testsMfa(s: PolicyStatement): boolean {
  return Object.values(s.condition).some((keys) => isObject(keys) && Object.keys(keys).some((k) => MFA_KEYS.includes(k.toLowerCase())));
}

/** Values of one condition key under one operator, as strings (lower-cased). */
function conditionValues(s: PolicyStatement, operator: string, key: string): string[] {
  const out: string[] = [];
  for (const [op, keys] of Object.entries(s.condition)) {
    if (op !== operator || !isObject(keys)) continue;
    for (const [k, v] of Object.entries(keys)) if (k.toLowerCase() === key) out.push(...strings(v).map((x) => x.toLowerCase()));
  }
  return out;
}

/** An Allow that applies only with MFA (AWS's examples: Bool true, or a bounded MultiFactorAuthAge). */
function allowNeedsMfa(s: PolicyStatement): boolean {
  return (
    conditionValues(s, 'Bool', 'aws:multifactorauthpresent').includes('true') ||
    ['NumericLessThan', 'NumericLessThanEquals'].some((op) => conditionValues(s, op, 'aws:multifactorauthage').length > 0)
  );
}

/** A Deny that applies without MFA (AWS's examples: BoolIfExists or Bool false, or Null on MultiFactorAuthAge true). */
function denyWithoutMfa(s: PolicyStatement): boolean {
  return (
    s.effect === 'Deny' &&
    everyResource(s) &&
    (conditionValues(s, 'BoolIfExists', 'aws:multifactorauthpresent').includes('false') ||
      conditionValues(s, 'Bool', 'aws:multifactorauthpresent').includes('false') ||
      conditionValues(s, 'Null', 'aws:multifactorauthage').includes('true'))
  );
}

/**
 * The credential and MFA actions (content/aws-iam/mfa-sensitive-actions.json: those AWS's own MFA
 * self-service policy keeps behind MFA) that a document meant to enforce MFA (one testing
 * aws:MultiFactorAuthPresent or aws:MultiFactorAuthAge somewhere) allows without MFA: neither the
 * Allow requires MFA nor a Deny-without-MFA statement covers the action. The flaw of the policy AWS
 * once published, and CloudMapper reports as IAM_BAD_MFA_POLICY: its Deny exempted `iam:*`, so a
 * stolen password alone could deactivate the MFA device or create access keys. A document that does
 * not try to enforce MFA is not judged here.
 */
export function mfaUnprotected(doc: unknown): string[] {
  return memo(doc, 'mfaUnprotected', (statements) => mfaUnprotectedOf(statements));
}

function mfaUnprotectedOf(statements: PolicyStatement[]): string[] {
  if (!statements.some(testsMfa)) return [];
  const mfaDenies = statements.filter(denyWithoutMfa);
  return mfaSensitive().filter(
    (action) => statements.some((s) => s.effect === 'Allow' && grantsAll(s, action) && !allowNeedsMfa(s)) && !mfaDenies.some((d) => grantsAll(d, action)),
  );
}
