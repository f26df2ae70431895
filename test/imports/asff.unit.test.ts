import { describe, expect, it } from 'vitest';
import { asffFinding, prowlerAsffParser, requirementsOf, securityHubAsffParser } from '../../src/modules/discovery/imports/asff.js';
import { mapRequirements } from '../../src/modules/discovery/imports/framework-names.js';
import { MalformedImportError } from '../../src/modules/discovery/imports/import-record.js';
import { collect, collectUntilError, countBy, errorsOf, fileStream, findingsOf, fixtureText, generatedArray, head, take, textStream } from './parse-helpers.js';

/**
 * ASFF parsers on the real samples (test/fixtures/imports, see SOURCES-asff-sarif.md): Prowler 3.3.0
 * `-M json-asff` output and Security Hub exports of its own controls, GuardDuty and Inspector.
 */

const PROWLER = 'prowler3.3.0-output-non-ap-regions.asff.json';
/** Security Hub samples: record count and the product of every record. */
const SECURITY_HUB: Array<[string, number, string]> = [
  ['securityhub-fsbp-config-controls.json', 3, 'securityhub'],
  ['securityhub-guardduty.json', 4, 'guardduty'],
  ['securityhub-inspector-ecr.json', 7, 'inspector'],
  ['securityhub-inspector-ec2-cve.json', 5, 'inspector'],
  ['asff-inspector-bare-array.json', 5, 'inspector'],
];
const OTHER_FORMATS = [
  'prowler5-example_output_aws.ocsf.json',
  'trivy-config-terraform.sarif',
  'semgrep-oss-1.69.0.sarif',
  'kics-E2E_CLI_079-github-actions.sarif',
  'terrascan-1.17.0-terraform-aws_ami_violation.sarif',
];

describe('Prowler ASFF', () => {
  it('reads all 527 records of the sample with the statuses it states (FAILED 208, PASSED 315, INFOED 4)', async () => {
    const items = await collect(prowlerAsffParser, fileStream(PROWLER));
    expect(items).toHaveLength(527);
    const findings = findingsOf(items);
    expect(findings).toHaveLength(527);
    expect(countBy(findings, (f) => f.status)).toEqual({ fail: 208, pass: 315, unknown: 4 });
    expect(countBy(findings, (f) => f.source)).toEqual({ prowler: 527 });
    expect(countBy(findings, (f) => f.severity)).toEqual({ high: 300, medium: 176, low: 40, critical: 11 });
    // Prowler 3 repeats an Id when one check gives several verdicts on one resource (user dams:
    // "no console password" PASSED, "access key 2 unused for 729 days" FAILED): the parser keeps the
    // source's Id, and the pipeline must let the failure win within one import.
    expect(new Set(findings.map((f) => f.source_finding_id)).size).toBe(524);
    const repeated = findings.filter((f) => f.source_finding_id === 'prowler-iam_disable_90_days_credentials-123456789012-eu-west-1-2bb0c5a32');
    expect(repeated.map((f) => f.status)).toEqual(['pass', 'fail']);
  });

  it('maps a record field by field', async () => {
    const [first] = await collect(prowlerAsffParser, fileStream(PROWLER));
    expect(first).toEqual({
      kind: 'finding',
      source: 'prowler',
      check_id: 'accessanalyzer_enabled',
      source_finding_id: 'prowler-accessanalyzer_enabled-123456789012-ca-central-1-fb33278bd',
      status: 'fail',
      severity: 'low',
      // Prowler's Description is the verdict on the resource; its Title is the check's question.
      title: 'IAM Access Analyzer in account 123456789012 is not enabled',
      description: 'IAM Access Analyzer in account 123456789012 is not enabled',
      remediation:
        'Enable IAM Access Analyzer for all accounts, create analyzer and take action over it is recommendations (IAM Access Analyzer is available at no additional cost).\nhttps://docs.aws.amazon.com/IAM/latest/UserGuide/what-is-access-analyzer.html',
      resource: { provider: 'aws', uid: '123456789012', type: 'Other', name: '123456789012', account_id: '123456789012', region: 'ca-central-1' },
      requirements: [
        { framework: 'CIS-1.5', requirement: '1.20' },
        { framework: 'CIS-1.4', requirement: '1.20' },
      ],
      details: {
        product_arn: 'arn:aws:securityhub:ca-central-1::product/prowler/prowler',
        generator_id: 'prowler-accessanalyzer_enabled',
        types: ['IAM'],
        record_state: 'ACTIVE',
        compliance_status: 'FAILED',
        check_title: 'Check if IAM Access Analyzer is enabled',
      },
    });
  });

  it('drops the last word of a requirement list Prowler cut at 63 characters, and keeps each of several requirements', async () => {
    const items = findingsOf(await collect(prowlerAsffParser, fileStream(PROWLER)));
    const trail = items.find((f) => f.source_finding_id === 'prowler-cloudtrail_s3_dataevents_read_enabled-123456789012-eu-west-1-266d98fa9')!;
    expect(trail.resource).toMatchObject({ type: 'AwsS3Bucket', name: 'No trails', region: 'eu-west-1' });
    const hipaa = trail.requirements.filter((r) => r.framework === 'HIPAA').map((r) => r.requirement);
    // "HIPAA 164_308_a_1_ii_d 164_308_a_3_ii_a 164_308_a_6_ii 164_312_": the last one was cut.
    expect(hipaa).toEqual(['164_308_a_1_ii_d', '164_308_a_3_ii_a', '164_308_a_6_ii']);
    expect(trail.requirements.filter((r) => r.framework === 'SOC2').map((r) => r.requirement)).toEqual(['cc_2_1', 'cc_7_2']);
  });

  it("maps Prowler v3's INFOED (manual checks) to unknown", async () => {
    const items = findingsOf(await collect(prowlerAsffParser, fileStream(PROWLER)));
    const manual = items.find((f) => f.check_id === 'account_maintain_current_contact_details')!;
    expect(manual.status).toBe('unknown');
    expect(manual.details.compliance_status).toBe('INFOED');
  });
});

describe('Security Hub ASFF', () => {
  it.each(SECURITY_HUB)('reads %s: %i findings from %s', async (name, count, source) => {
    const items = await collect(securityHubAsffParser, fileStream(name));
    expect(errorsOf(items)).toEqual([]);
    expect(items).toHaveLength(count);
    expect(countBy(findingsOf(items), (f) => f.source)).toEqual({ [source]: count });
  });

  it('maps a Security Hub control finding (FSBP IAM.5, passed) field by field', async () => {
    const [first] = await collect(securityHubAsffParser, fileStream('securityhub-fsbp-config-controls.json'));
    expect(first).toEqual({
      kind: 'finding',
      source: 'securityhub',
      check_id: 'IAM.5',
      source_finding_id:
        'arn:aws:securityhub:us-east-1:012345678912:subscription/aws-foundational-security-best-practices/v/1.0.0/IAM.5/finding/de861909-2d26-4e45-bd86-19d2ab6ceef1',
      status: 'pass',
      severity: 'info',
      title: 'IAM.5 MFA should be enabled for all IAM users that have console password',
      description:
        'This AWS control checks whether AWS Multi-Factor Authentication (MFA) is enabled for all AWS Identity and Access Management (IAM) users that use a console password.',
      remediation:
        'For directions on how to fix this issue, please consult the AWS Security Hub Foundational Security Best Practices documentation.\nhttps://docs.aws.amazon.com/console/securityhub/IAM.5/remediation',
      resource: { provider: 'aws', uid: 'AWS::::Account:012345678912', type: 'AwsAccount', name: '012345678912', account_id: '012345678912', region: 'us-east-1' },
      // The FSBP control the finding is the result of: it maps onto the aws-fsbp catalog.
      requirements: [{ framework: 'AWS-Foundational-Security-Best-Practices', requirement: 'IAM.5' }],
      details: {
        product_arn: 'arn:aws:securityhub:us-east-1::product/aws/securityhub',
        generator_id: 'aws-foundational-security-best-practices/v/1.0.0/IAM.5',
        types: ['Software and Configuration Checks/Industry and Regulatory Standards/AWS-Foundational-Security-Best-Practices'],
        record_state: 'ACTIVE',
        workflow_status: 'NEW',
        compliance_status: 'PASSED',
        check_title: 'IAM.5 MFA should be enabled for all IAM users that have console password',
      },
    });
  });

  it('maps a GuardDuty finding: its finding type is the check, the instance the resource', async () => {
    const [first] = findingsOf(await collect(securityHubAsffParser, fileStream('securityhub-guardduty.json')));
    expect(first).toMatchObject({
      source: 'guardduty',
      check_id: 'DefenseEvasion:EC2-UnusualDNSResolver',
      source_finding_id: 'arn:aws:guardduty:us-east-1:123456789012:detector/123456789/finding/123456789789',
      status: 'fail',
      severity: 'medium',
      title: 'EC2 instance i-1234567890 is communicating with an Unusual DNS Resolver 1.1.1.1.',
      resource: {
        provider: 'aws',
        uid: 'arn:aws:ec2:us-east-1:123456789012:instance/i-1234567890',
        type: 'AwsEc2Instance',
        name: 'i-1234567890',
        account_id: '123456789012',
        region: 'us-east-1',
        tags: { ManagedBy: 'Terraform', 'map-migrated': 'd-server-asdfasdf', Name: 'asdf-namenamename', domain: 'asdf' },
      },
      requirements: [],
    });
    expect(first!.cve_ids).toBeUndefined();
  });

  it('maps an Inspector finding: the CVE is its check and its cve_ids', async () => {
    const [first] = findingsOf(await collect(securityHubAsffParser, fileStream('securityhub-inspector-ecr.json')));
    expect(first).toMatchObject({
      source: 'inspector',
      check_id: 'CVE-2023-2650',
      cve_ids: ['CVE-2023-2650'],
      status: 'fail',
      severity: 'medium',
      title: 'CVE-2023-2650 - openssl',
      resource: {
        uid: 'arn:aws:ecr:eu-central-1:123456789012:repository/repo-os/sha256:af965ef68c78374a5f987fce98c0ddfa45801df2395bf012c50b863e65978d74',
        type: 'AwsEcrContainerImage',
        account_id: '123456789012',
        region: 'eu-central-1',
      },
    });
  });

  it('reads a recorded API call {status_code, data: {Findings}} exactly like the response itself', async () => {
    const response = fixtureText('securityhub-guardduty.json');
    const recorded = `{"status_code": 200, "data": ${response}}`;
    const direct = await collect(securityHubAsffParser, textStream(response));
    const wrapped = await collect(securityHubAsffParser, textStream(recorded));
    expect(wrapped).toHaveLength(4);
    expect(wrapped).toEqual(direct);
  });

  it('says which state decides: ARCHIVED passes, SUPPRESSED is unknown, a failed check stays failed when marked RESOLVED', async () => {
    const [control] = JSON.parse(fixtureText('securityhub-fsbp-config-controls.json')).findings;
    const [threat] = JSON.parse(fixtureText('securityhub-guardduty.json')).Findings;
    const failed = { ...control, Compliance: { Status: 'FAILED', RelatedRequirements: ['NIST.800-53.r5 AC-2(1)', 'PCI DSS v3.2.1/8.3.1'] } };
    const records = [
      failed,
      { ...failed, Workflow: { Status: 'RESOLVED' } },
      { ...failed, Workflow: { Status: 'SUPPRESSED' } },
      { ...failed, RecordState: 'ARCHIVED' },
      { ...failed, Compliance: { Status: 'WARNING' } },
      { ...failed, Compliance: { Status: 'NOT_AVAILABLE' } },
      { ...threat, Workflow: { Status: 'RESOLVED' } },
      { ...threat, RecordState: 'ARCHIVED' },
    ];
    const items = findingsOf(await collect(securityHubAsffParser, textStream(JSON.stringify({ Findings: records }))));
    expect(items.map((f) => f.status)).toEqual(['fail', 'fail', 'unknown', 'pass', 'unknown', 'unknown', 'pass', 'pass']);
    // A failed control's title is the control's name: it is prefixed with the resource that failed it.
    expect(items[0]!.title).toBe('AwsAccount 012345678912 failed: IAM.5 MFA should be enabled for all IAM users that have console password');
    expect(items[0]!.requirements).toEqual([
      { framework: 'NIST.800-53.r5', requirement: 'AC-2(1)' },
      { framework: 'PCI DSS v3.2.1', requirement: '8.3.1' },
      { framework: 'AWS-Foundational-Security-Best-Practices', requirement: 'IAM.5' },
    ]);
  });

  it("reads a consolidated control finding's SecurityControlId as the check", async () => {
    const [control] = JSON.parse(fixtureText('securityhub-fsbp-config-controls.json')).findings;
    const { ControlId: _controlId, ...productFields } = control.ProductFields;
    const consolidated = { ...control, GeneratorId: 'security-control/IAM.6', ProductFields: productFields, Compliance: { Status: 'FAILED', SecurityControlId: 'IAM.6' } };
    const [finding] = findingsOf(await collect(securityHubAsffParser, textStream(JSON.stringify([consolidated]))));
    expect(finding).toMatchObject({ source: 'securityhub', check_id: 'IAM.6', status: 'fail' });
  });
});

describe('ASFF streaming', () => {
  it('yields the first findings of a large export long before the end of the file', async () => {
    const [record] = JSON.parse(fixtureText('securityhub-guardduty.json')).Findings;
    const file = generatedArray('{"Findings": [', record, 200_000, ']}');
    const items = await take(securityHubAsffParser, file.stream, 100);
    expect(findingsOf(items)).toHaveLength(100);
    expect(file.produced()).toBeLessThan(2_000);
  });
});

describe('ASFF requirements', () => {
  it('reads both Security Hub spellings and Prowler lists', () => {
    expect(requirementsOf(['NIST.800-53.r5 AC-2', 'CIS AWS Foundations Benchmark v1.2.0/1.10', 'PCI DSS v3.2.1/8.3.1', 'CIS-1.5 5.2 5.3', 42, ''])).toEqual([
      { framework: 'NIST.800-53.r5', requirement: 'AC-2' },
      { framework: 'CIS AWS Foundations Benchmark v1.2.0', requirement: '1.10' },
      { framework: 'PCI DSS v3.2.1', requirement: '8.3.1' },
      { framework: 'CIS-1.5', requirement: '5.2' },
      { framework: 'CIS-1.5', requirement: '5.3' },
    ]);
  });
});

describe('ASFF findings of the AWS Foundational Security Best Practices standard', () => {
  it('name the control they are the result of, which maps onto the aws-fsbp catalog', async () => {
    const items = findingsOf(await collect(securityHubAsffParser, fileStream('securityhub-fsbp-config-controls.json')));
    expect(items.length).toBeGreaterThan(0);
    // Prowler's catalog of the standard holds 286 of its controls: one it lacks (ELBv2.1) stays unmapped.
    const mapped = new Set<string>();
    for (const f of items) {
      expect(f.requirements.at(-1)).toEqual({ framework: 'AWS-Foundational-Security-Best-Practices', requirement: f.check_id });
      const { mappings, unmapped } = mapRequirements(f.requirements.slice(-1), 'aws');
      if (mappings.length) mapped.add(f.check_id);
      expect(mappings.length ? mappings : unmapped, f.check_id).toEqual(mappings.length ? [{ framework: 'aws-fsbp', control_id: f.check_id }] : f.requirements.slice(-1));
    }
    expect(mapped).toContain('IAM.5');
  });

  it('read a consolidated control finding by its SecurityControlId when the standard is associated', () => {
    const record = {
      Id: 'arn:aws:securityhub:us-east-1:123456789012:security-control/S3.1/finding/1',
      GeneratorId: 'security-control/S3.1',
      Resources: [{ Id: 'AWS::::Account:123456789012', Type: 'AwsAccount', Region: 'us-east-1' }],
      Compliance: { Status: 'FAILED', SecurityControlId: 'S3.1', AssociatedStandards: [{ StandardsId: 'standards/aws-foundational-security-best-practices/v/1.0.0' }] },
      Severity: { Label: 'MEDIUM' },
      Title: 'S3 general purpose buckets should have block public access settings enabled',
    };
    const finding = asffFinding(record, 0);
    expect(finding).toMatchObject({ kind: 'finding', requirements: [{ framework: 'AWS-Foundational-Security-Best-Practices', requirement: 'S3.1' }] });
    const other = asffFinding({ ...record, Compliance: { ...record.Compliance, AssociatedStandards: [{ StandardsId: 'standards/cis-aws-foundations-benchmark/v/1.4.0' }] } }, 0);
    expect(other).toMatchObject({ kind: 'finding', requirements: [] });
  });
});

describe('ASFF detection', () => {
  it('tells Prowler ASFF from Security Hub ASFF', () => {
    expect(prowlerAsffParser.detect(head(PROWLER))).toBe(true);
    expect(securityHubAsffParser.detect(head(PROWLER))).toBe(false);
    for (const [name] of SECURITY_HUB) {
      expect(securityHubAsffParser.detect(head(name)), name).toBe(true);
      expect(prowlerAsffParser.detect(head(name)), name).toBe(false);
    }
  });

  it.each(OTHER_FORMATS)('claims no other format: %s', (name) => {
    expect(prowlerAsffParser.detect(head(name))).toBe(false);
    expect(securityHubAsffParser.detect(head(name))).toBe(false);
  });
});

describe('broken ASFF files', () => {
  it('refuses a truncated file naming the byte offset, after the records before the cut', async () => {
    const whole = Buffer.from(fixtureText(PROWLER));
    const cut = whole.subarray(0, 100_000);
    const { items, error } = await collectUntilError(prowlerAsffParser, textStream(cut));
    expect(error).toBeInstanceOf(MalformedImportError);
    expect((error as MalformedImportError).offset).toBe(100_000);
    expect((error as MalformedImportError).message).toMatch(/byte 100000/);
    expect(items.length).toBeGreaterThan(0);
    expect(errorsOf(items)).toEqual([]);
  });

  it('lists a record that is a string, lacks an Id or has no resource, and reads the rest', async () => {
    const [a, b] = JSON.parse(fixtureText(PROWLER));
    const { Id: _id, ...noId } = a;
    const noResources = { ...b, Resources: [] };
    const records = ['not a finding', noId, a, noResources, b];
    const items = await collect(prowlerAsffParser, textStream(JSON.stringify(records)));
    expect(items.map((i) => i.kind)).toEqual(['error', 'error', 'finding', 'error', 'finding']);
    expect(errorsOf(items)).toEqual([
      { kind: 'error', record: 0, message: 'expected an ASFF finding object, got a string' },
      { kind: 'error', record: 1, message: 'no Id' },
      { kind: 'error', record: 3, message: `finding ${b.Id}: no resource (Resources[0].Id)` },
    ]);
  });

  it('refuses an object without a findings array ({}) as malformed, and reads an empty page as no findings', async () => {
    await expect(collect(securityHubAsffParser, textStream('{}'))).rejects.toThrow(MalformedImportError);
    await expect(collect(securityHubAsffParser, textStream('{"data": {"Something": []}}'))).rejects.toThrow(/no Findings array/);
    expect(await collect(securityHubAsffParser, textStream('{"Findings": [], "NextToken": null}'))).toEqual([]);
    expect(await collect(securityHubAsffParser, textStream('{"status_code": 200, "data": {"Findings": []}}'))).toEqual([]);
    expect(await collect(prowlerAsffParser, textStream('[]'))).toEqual([]);
  });

  it('reads a lone finding object (the shape BatchImportFindings takes one of) as one record', async () => {
    const [record] = JSON.parse(fixtureText('securityhub-guardduty.json')).Findings;
    const items = await collect(securityHubAsffParser, textStream(JSON.stringify(record)));
    expect(findingsOf(items).map((f) => f.source_finding_id)).toEqual([record.Id]);
  });

  it('refuses a file that is not JSON at byte 0', async () => {
    const { error } = await collectUntilError(securityHubAsffParser, textStream('SchemaVersion,Id\n'));
    expect(error).toBeInstanceOf(MalformedImportError);
    expect((error as MalformedImportError).offset).toBe(0);
  });
});
