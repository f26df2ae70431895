import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { MalformedImportError, type ImportItem, type ImportedFinding } from './import-record.js';
import { prowlerOcsfParser } from './prowler-ocsf.js';
import { detectFormat } from './parsers.js';

const fixture = (name: string) => readFileSync(new URL(`../../../../test/fixtures/imports/${name}`, import.meta.url));

async function parse(bytes: Buffer | string): Promise<ImportItem[]> {
  const out: ImportItem[] = [];
  // Small chunks, so records and strings cross chunk boundaries as in a real upload.
  const buffer = Buffer.from(bytes);
  const chunks = Array.from({ length: Math.ceil(buffer.length / 997) }, (_, i) => buffer.subarray(i * 997, (i + 1) * 997));
  for await (const item of prowlerOcsfParser.parse(Readable.from(chunks))) out.push(item);
  return out;
}

const findings = (items: ImportItem[]) => items.filter((i): i is ImportedFinding => i.kind === 'finding');

describe('Prowler OCSF parser', () => {
  it('reads the v5 AWS sample: check ids, statuses, verdict titles, resource, requirements', async () => {
    const items = await parse(fixture('prowler5-example_output_aws.ocsf.json'));
    expect(items).toHaveLength(5);
    const all = findings(items);
    expect(all.map((f) => f.status)).toEqual(['fail', 'unknown', 'fail', 'unknown', 'unknown']);
    const first = all[0]!;
    expect(first).toMatchObject({
      source: 'prowler',
      check_id: 'accessanalyzer_enabled',
      source_finding_id: '<finding_uid>',
      severity: 'low',
      title: 'IAM Access Analyzer in account <account_uid> is not enabled.',
      resource: { provider: 'aws', uid: '<resource_uid>', type: 'Other', account_id: '<account_uid>', region: '<region>' },
    });
    expect(first.requirements).toContainEqual({ framework: 'CIS-1.4', requirement: '1.20' });
    expect(first.remediation).toContain('aws accessanalyzer create-analyzer');
  });

  it('reads the v4 sample (OCSF 1.2)', async () => {
    const [f] = findings(await parse(fixture('prowler4.2.1-one_vuln.ocsf.json')));
    expect(f).toMatchObject({
      check_id: 'iam_role_administratoraccess_policy_permissive_trust_relationship',
      status: 'fail',
      severity: 'high',
      title: expect.stringContaining('has AdministratorAccess policy attached'),
      resource: { provider: 'aws', uid: 'arn:aws:iam::123456789012:role/myAdministratorExecutionRole', type: 'AwsIamRole', account_id: '123456789012', region: 'us-east-1' },
    });
  });

  it('reads the Azure and GCP samples as nodes of their providers', async () => {
    const azure = findings(await parse(fixture('prowler5.4.0-example_output_azure.ocsf.json')));
    expect(azure).toHaveLength(5);
    expect(new Set(azure.map((f) => f.resource.provider))).toEqual(new Set(['azure']));
    const gcp = findings(await parse(fixture('prowler5.4.0-example_output_gcp.ocsf.json')));
    expect(gcp.map((f) => f.status)).toEqual(['pass', 'fail', 'pass', 'pass', 'fail']);
    expect(gcp[0]!.resource).toMatchObject({ provider: 'gcp', account_id: '<project_id>', region: 'global' });
  });

  it('is detected from its head, and other JSON is not', () => {
    expect(detectFormat(fixture('prowler5-example_output_aws.ocsf.json').toString('utf8'))).toBe('prowler-ocsf');
    expect(detectFormat('{"Findings": []}')).toBeNull();
  });

  it('a truncated file is malformed, naming the byte offset', async () => {
    const whole = fixture('prowler5-example_output_aws.ocsf.json');
    const error = await parse(whole.subarray(0, 5000)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MalformedImportError);
    expect((error as MalformedImportError).offset).toBe(5000);
    expect((error as Error).message).toMatch(/byte 5000/);
  });

  it('a record that is a string is a RecordError; the others are still read', async () => {
    const records = JSON.parse(fixture('prowler5-example_output_aws.ocsf.json').toString('utf8')) as unknown[];
    records[1] = 'not a finding';
    (records[2] as Record<string, unknown>).metadata = {};
    const items = await parse(JSON.stringify(records));
    expect(items.map((i) => i.kind)).toEqual(['finding', 'error', 'error', 'finding', 'finding']);
    expect(items[1]).toMatchObject({ kind: 'error', record: 1, message: expect.stringContaining('string') });
    expect(items[2]).toMatchObject({ kind: 'error', record: 2, message: expect.stringContaining('event_code') });
  });

  it('a JSON object is not a Prowler file', async () => {
    await expect(parse('{"findings": []}')).rejects.toBeInstanceOf(MalformedImportError);
  });
});
