import { describe, expect, it } from 'vitest';
import { factsOf, matches, needsLookup, type Candidate } from '../../src/modules/integrations/matching.js';
import { mergeConfig, normaliseConfig, redactedSecrets, splitSecrets, joinSecrets } from '../../src/modules/integrations/config.js';
import { SecretBox } from '../../src/platform/crypto/secret-box.js';
import { retryAfterMs } from '../../src/modules/integrations/delivery-job.js';
import { truncate } from '../../src/modules/integrations/http-client.js';

const candidate = (overrides: Partial<Candidate> = {}): Candidate => ({
  id: 'i',
  tenantId: 't',
  events: new Set(['finding.created', 'finding.resolved', 'compliance.score_changed']),
  enabledAt: 1_000,
  workspaces: null,
  filters: {},
  ...overrides,
});
const created = (finding: Record<string, unknown>, workspaceId: string | null = 'w1') => ({ type: 'finding.created', workspaceId, createdAt: 2_000, data: { finding } });

describe('matching events to integrations', () => {
  it('needs a subscribed type and an event no older than the (re-)enabling', () => {
    expect(matches(candidate(), created({ severity: 'HIGH' }), {})).toBe(true);
    expect(matches(candidate({ events: new Set(['finding.resolved']) }), created({}), {})).toBe(false);
    expect(matches(candidate({ enabledAt: 3_000 }), created({}), {})).toBe(false);
  });

  it('filters by severity, framework and resource type when the event has them', () => {
    const e = created({ severity: 'HIGH', framework: 'cis-aws', resource_type: 'aws.s3.bucket' });
    const facts = factsOf(e.data);
    expect(facts).toEqual({ severity: 'HIGH', framework: 'cis-aws', resource_type: 'aws.s3.bucket' });
    expect(matches(candidate({ filters: { severity: ['CRITICAL', 'HIGH'] } }), e, facts)).toBe(true);
    expect(matches(candidate({ filters: { severity: ['CRITICAL'] } }), e, facts)).toBe(false);
    expect(matches(candidate({ filters: { frameworks: ['pci-dss'] } }), e, facts)).toBe(false);
    expect(matches(candidate({ filters: { resource_types: ['aws.s3.bucket'] } }), e, facts)).toBe(true);
    expect(matches(candidate({ filters: { resource_types: ['aws.ec2.instance'] } }), e, facts)).toBe(false);
  });

  it('a filter the event has no value for does not hold it back; finding ids ask for a lookup', () => {
    const score = { type: 'compliance.score_changed', workspaceId: 'w1', createdAt: 2_000, data: { framework: 'overall', delta: -6 } };
    expect(matches(candidate({ filters: { severity: ['CRITICAL'] } }), score, factsOf(score.data))).toBe(true);
    const resolved = { finding_id: 'r:x', resolved_at: 'now' };
    expect(needsLookup(candidate({ filters: { severity: ['HIGH'] } }), factsOf(resolved))).toBe(true);
    expect(needsLookup(candidate(), factsOf(resolved))).toBe(false);
  });

  it('workspaces: only the listed ones; tenant-wide events always pass', () => {
    const only = candidate({ workspaces: new Set(['w2']) });
    expect(matches(only, created({}, 'w1'), {})).toBe(false);
    expect(matches(only, created({}, 'w2'), {})).toBe(true);
    expect(matches(only, created({}, null), {})).toBe(true);
  });
});

describe('configuration', () => {
  const webhook = { url: 'https://hooks.example.com/x', secret: 's', events: ['finding.created'] };

  it('normalises with defaults and names the field of every problem', () => {
    expect(normaliseConfig('webhook', webhook)).toEqual({ ...webhook, timeout_seconds: 30 });
    expect(normaliseConfig('webhook', { ...webhook, filters: { severity: ['high', 'HIGH'] } }).filters).toEqual({ severity: ['HIGH'] });
    const problems: Array<[unknown, string]> = [
      [{ ...webhook, url: undefined }, 'config.url is required'],
      [{ ...webhook, secret: undefined }, 'config.secret is required'],
      [{ ...webhook, events: [] }, 'config.events must not be empty'],
      [{ ...webhook, events: ['finding.exploded'] }, 'config.events[0]: unknown event type "finding.exploded"'],
      [{ ...webhook, url: 'not a url' }, 'config.url must be an absolute URL'],
      [{ ...webhook, url: 'https://u:p@example.com/' }, 'config.url must not carry credentials'],
      [{ ...webhook, filters: { severity: ['URGENT'] } }, 'config.filters.severity[0] must be one of CRITICAL, HIGH, MEDIUM, LOW, INFO'],
      [{ ...webhook, filters: { owners: ['x'] } }, 'config.filters.owners is not a known field'],
      [{ ...webhook, timeout_seconds: 0 }, 'config.timeout_seconds must be an integer from 1 to 120'],
      [{ ...webhook, headers: { Host: 'evil' } }, 'config.headers: Host is set by the service and cannot be configured'],
      [{ ...webhook, headers: { 'X-Ok': 'a\r\nInjected: 1' } }, 'config.headers.X-Ok must be a string without line breaks'],
      [{ ...webhook, workspaces: ['nope'] }, 'config.workspaces[0] must be a workspace id (UUID)'],
      [{ ...webhook, colour: 'red' }, 'config.colour is not a known field'],
      ['x', 'config must be an object'],
    ];
    for (const [config, message] of problems) expect(() => normaliseConfig('webhook', config), message).toThrow(message);
    expect(() => normaliseConfig('jira', { base_url: 'https://x.atlassian.net', project_key: 'sec', api_token: 't', events: ['finding.created'] })).toThrow(
      'config.project_key must be a Jira project key',
    );
    expect(() => normaliseConfig('github', { repository: 'no-slash', token: 't', events: ['finding.created'] })).toThrow('config.repository must be owner/repo');
    expect(() => normaliseConfig('email', { to: ['not-an-address'], events: ['finding.created'] })).toThrow('config.to[0] must be an e-mail address');
  });

  it('splits secrets off, joins them back, shows only safe parts, and merges a PUT', () => {
    const config = normaliseConfig('webhook', { ...webhook, headers: { 'X-Api-Key': 'k' } });
    const { visible, secrets } = splitSecrets('webhook', config);
    expect(visible).toEqual({ url: webhook.url, events: webhook.events, timeout_seconds: 30 });
    expect(secrets).toEqual({ secret: 's', headers: { 'X-Api-Key': 'k' } });
    expect(joinSecrets(visible, secrets)).toEqual(config);
    expect(redactedSecrets('webhook', secrets)).toEqual({ headers: { 'X-Api-Key': '********' } });
    expect(redactedSecrets('slack', { url: 'https://hooks.slack.com/services/T0/B0/XYZ' })).toEqual({ url: 'https://hooks.slack.com/…' });
    const email = splitSecrets(
      'email',
      normaliseConfig('email', { to: ['a@example.com'], events: ['finding.created'], smtp: { host: 'smtp.example.com', password: 'pw', from: 'cg@example.com' } }),
    );
    expect(email.secrets).toEqual({ 'smtp.password': 'pw' });
    expect((email.visible.smtp as Record<string, unknown>).password).toBeUndefined();
    expect(mergeConfig(config, { url: 'https://other.example.com/', headers: null })).toEqual({
      url: 'https://other.example.com/',
      secret: 's',
      events: webhook.events,
      timeout_seconds: 30,
    });
  });

  it('seals secrets with AES-256-GCM bound to the integration id and the service key', () => {
    const box = new SecretBox(new TextEncoder().encode('service secret one'));
    const sealed = box.seal({ secret: 'top' }, 'id-1');
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]{8}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('top');
    expect(box.seal({ secret: 'top' }, 'id-1')).not.toBe(sealed);
    expect(box.open(sealed, 'id-1')).toEqual({ secret: 'top' });
    expect(() => box.open(sealed, 'id-2')).toThrow('does not open');
    expect(() => new SecretBox(new TextEncoder().encode('service secret two')).open(sealed, 'id-1')).toThrow('another service key');
    const parts = sealed.split('.');
    const body = Buffer.from(parts[3]!, 'base64url');
    body[0] = body[0]! ^ 1;
    expect(() => box.open([...parts.slice(0, 3), body.toString('base64url')].join('.'), 'id-1')).toThrow('does not open');
  });
});

describe('small pieces', () => {
  it('reads Retry-After as seconds or an HTTP date, capped at a day', () => {
    const now = new Date('2026-11-23T12:00:00Z');
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs('Mon, 23 Nov 2026 12:05:00 GMT', now)).toBe(300_000);
    expect(retryAfterMs('Mon, 23 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('9999999', now)).toBe(86_400_000);
    expect(retryAfterMs('soon', now)).toBeNull();
    expect(retryAfterMs(undefined, now)).toBeNull();
  });

  it('truncates response bodies to a byte limit without splitting a character', () => {
    expect(truncate(Buffer.from('abc'), 10)).toBe('abc');
    expect(truncate(Buffer.from('aé'), 2)).toBe('a…');
    expect(truncate(Buffer.from('x'.repeat(2000)), 1024)).toHaveLength(1025);
  });
});
