import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MalformedImportError } from '../../src/modules/discovery/imports/import-record.js';
import { normalizeUri, sarifParser, sourceName } from '../../src/modules/discovery/imports/sarif.js';
import { collect, collectUntilError, countBy, errorsOf, fileStream, findingsOf, fixtureText, generatedArray, head, take, textStream } from './parse-helpers.js';

/**
 * SARIF 2.1.0 on the real samples (test/fixtures/imports, see SOURCES-asff-sarif.md): Trivy config
 * (Terraform), terrascan (Terraform and Dockerfile), KICS (GitHub Actions) and Semgrep (code).
 */

const TRIVY = 'trivy-config-terraform.sarif';
const TERRASCAN_TF = 'terrascan-1.17.0-terraform-aws_ami_violation.sarif';
const TERRASCAN_DOCKER = 'terrascan-1.17.0-dockerfile_platform_flag.sarif';
const KICS = 'kics-E2E_CLI_079-github-actions.sarif';
const SEMGREP = 'semgrep-oss-1.69.0.sarif';

const SAMPLES: Array<[string, number, string]> = [
  [TRIVY, 8, 'trivy'],
  [TERRASCAN_TF, 1, 'terrascan'],
  [TERRASCAN_DOCKER, 1, 'terrascan'],
  [KICS, 2, 'kics'],
  [SEMGREP, 77, 'semgrep'],
];
const OTHER_FORMATS = [
  'prowler3.3.0-output-non-ap-regions.asff.json',
  'securityhub-fsbp-config-controls.json',
  'securityhub-guardduty.json',
  'securityhub-inspector-ecr.json',
  'securityhub-inspector-ec2-cve.json',
  'asff-inspector-bare-array.json',
  'prowler5-example_output_aws.ocsf.json',
];

/** A one-run SARIF log around the given results, with a rule for `R1`. */
function log(results: unknown[], rules: unknown[] = [{ id: 'R1', shortDescription: { text: 'Rule one' } }], name = 'checkov') {
  return JSON.stringify({ version: '2.1.0', runs: [{ tool: { driver: { name, rules } }, results }] });
}

const at = (uri: string, startLine = 3) => [{ physicalLocation: { artifactLocation: { uri }, region: { startLine } } }];

describe('SARIF samples', () => {
  it.each(SAMPLES)('reads %s: %i failed results of %s', async (name, count, source) => {
    const items = await collect(sarifParser, fileStream(name));
    expect(errorsOf(items)).toEqual([]);
    expect(items).toHaveLength(count);
    const findings = findingsOf(items);
    expect(countBy(findings, (f) => f.source)).toEqual({ [source]: count });
    expect(countBy(findings, (f) => f.status)).toEqual({ fail: count });
    expect(findings.every((f) => f.resource.provider === 'iac' && f.resource.type === 'iac_file')).toBe(true);
  });

  it('maps a Trivy result field by field (the numeric security-severity decides)', async () => {
    const items = findingsOf(await collect(sarifParser, fileStream(TRIVY)));
    expect(countBy(items, (f) => f.severity)).toEqual({ high: 5, low: 2, medium: 1 });
    const message =
      'Artifact: main.tf\nType: terraform\nVulnerability AWS-0086\nSeverity: HIGH\nMessage: No public access block so not blocking public acls\nLink: [AWS-0086](https://avd.aquasec.com/misconfig/aws-0086)';
    // Trivy gives no fingerprint: the id is a digest of tool, rule, file, line and message.
    const digest = createHash('sha256').update(['trivy', 'AWS-0086', 'main.tf', '8', message].join('\u0000')).digest('hex');
    expect(items[0]).toEqual({
      kind: 'finding',
      source: 'trivy',
      check_id: 'AWS-0086',
      source_finding_id: digest,
      status: 'fail',
      severity: 'high',
      title: 'main.tf:8: No public access block so not blocking public acls',
      description: 'S3 buckets should block public ACLs on buckets and any objects they contain. By blocking, PUTs with fail if the object has any public ACL a.',
      remediation:
        'Misconfiguration AWS-0086\nType: Terraform Security Check\nSeverity: HIGH\nCheck: S3 Access block should block public ACL\nMessage: No public access block so not blocking public acls\nLink: [AWS-0086](https://avd.aquasec.com/misconfig/aws-0086)\nS3 buckets should block public ACLs on buckets and any objects they contain. By blocking, PUTs with fail if the object has any public ACL a.\nhttps://avd.aquasec.com/misconfig/aws-0086',
      resource: { provider: 'iac', uid: 'main.tf', type: 'iac_file', name: 'main.tf', account_id: '', region: '' },
      requirements: [],
      location: { uri: 'main.tf', start_line: 8, end_line: 10 },
      details: { rule_name: 'Misconfiguration', level: 'error', uri_base_id: 'ROOTPATH', tags: ['misconfiguration', 'security', 'HIGH'], message },
    });
    expect(new Set(items.map((f) => f.source_finding_id)).size).toBe(8);
  });

  it("keeps terrascan's Terraform resource address (logical location kind and name) for the pipeline to link", async () => {
    const [finding] = findingsOf(await collect(sarifParser, fileStream(TERRASCAN_TF)));
    const uri = '/Users/suvarna/go/src/github.com/rchanger/terrascan/test/e2e/test_data/iac/aws/aws_ami_violation/main.tf';
    expect(finding).toMatchObject({
      check_id: 'AC_AWS_0001',
      severity: 'medium',
      title: `aws_ami.awsAmiEncrypted (${uri}:5): Enable AWS AMI Encryption`,
      resource: { uid: `${uri}#aws_ami.awsAmiEncrypted`, name: uri },
      location: { uri, start_line: 5 },
      details: { terraform_address: 'aws_ami.awsAmiEncrypted', tool_version: '1.17.0', rule_name: 'amiNotEncrypted' },
    });
  });

  it('gives a Dockerfile no Terraform address, but keeps its logical location in the resource', async () => {
    const [finding] = findingsOf(await collect(sarifParser, fileStream(TERRASCAN_DOCKER)));
    expect(finding!.details.terraform_address).toBeUndefined();
    expect(finding!.resource.uid).toMatch(/\/Dockerfile#Dockerfile$/);
    expect(finding!.details.logical_location).toBe('Dockerfile');
  });

  it("reads KICS's Windows paths and the CWE it relates its rule to", async () => {
    const [finding, twin] = findingsOf(await collect(sarifParser, fileStream(KICS)));
    expect(finding).toMatchObject({
      check_id: '20f14e1a-a899-4e79-9f09-b6a84cd4649b',
      // No security-severity: the rule's default level error.
      severity: 'high',
      title: 'path/test/fixtures/test_sarif_cwe_report/run_block_injection/test/positive1.yaml:10: Run block contains dangerous input controlled by user.',
      location: { uri: 'path/test/fixtures/test_sarif_cwe_report/run_block_injection/test/positive1.yaml', start_line: 10 },
      remediation: 'https://securitylab.github.com/research/github-actions-untrusted-input/',
      details: { cwe: ['CWE-22'], kind: 'fail', tool_version: 'development' },
    });
    // The sample repeats one result byte for byte: the same finding, the same id.
    expect(twin!.source_finding_id).toBe(finding!.source_finding_id);
  });

  it('reads Semgrep: fingerprints as ids, severity words, OWASP categories as requirements, CWE in details', async () => {
    const items = findingsOf(await collect(sarifParser, fileStream(SEMGREP)));
    expect(countBy(items, (f) => f.severity)).toEqual({ medium: 42, critical: 34, high: 1 });
    expect(new Set(items.map((f) => f.source_finding_id)).size).toBe(77);
    const [first] = items;
    expect(first).toMatchObject({
      check_id: 'vulnerability-management-registry.semgrep-rules.gitlab-rules.sast-rules.javascript.pathtraversal.javascript_pathtraversal_rule-non-literal-fs-filename',
      source_finding_id: 'e5aea7d033ad2f52b0c68a45048d8297e59597971eb74ca387ebdb598e9d2631c1de6945ffea9d9dc2fce6bb0f1e8f8e966061e685f3f72c40459c30f9fe7235_0',
      // The message wraps a long explanation: the title is its first sentence.
      title: 'Gruntfile.js:75: The application dynamically constructs file or path information.',
      location: { uri: 'Gruntfile.js', start_line: 75, end_line: 75 },
      requirements: [
        { framework: 'OWASP Top 10 2021', requirement: 'A01' },
        { framework: 'OWASP Top 10 2017', requirement: 'A5' },
      ],
      details: { cwe: ['CWE-22'], uri_base_id: '%SRCROOT%', tool_version: '1.69.0' },
    });
  });
});

describe('SARIF mapping', () => {
  it('reads kind and suppressions: fail or none fails, pass passes, an accepted suppression is unknown', async () => {
    const base = { ruleId: 'R1', message: { text: 'S3 bucket has no logging' }, locations: at('main.tf') };
    const results = [
      base,
      { ...base, kind: 'fail' },
      { ...base, kind: 'pass' },
      { ...base, kind: 'open' },
      { ...base, suppressions: [{ kind: 'inSource', justification: 'accepted by the team' }] },
      { ...base, suppressions: [{ kind: 'external', status: 'underReview' }] },
    ];
    const items = findingsOf(await collect(sarifParser, textStream(log(results))));
    expect(items.map((f) => f.status)).toEqual(['fail', 'fail', 'pass', 'unknown', 'unknown', 'fail']);
    expect(items[4]!.details.suppression).toEqual({ kind: 'inSource', status: 'accepted', justification: 'accepted by the team' });
  });

  it('grades by security-severity number, then words, then level', async () => {
    const rules = [7, 9, 9.5, 6.9, 4, 3.9, 0.1, 0].map((score, n) => ({ id: `S${n}`, properties: { 'security-severity': String(score) } }));
    const scored = rules.map((r) => ({ ruleId: r.id, message: { text: 'x' }, locations: at('a.tf') }));
    const levels = ['error', 'warning', 'note', 'none', undefined].map((level) => ({ ruleId: 'R1', level, message: { text: 'x' }, locations: at('a.tf') }));
    const items = findingsOf(await collect(sarifParser, textStream(log([...scored, ...levels], [...rules, { id: 'R1' }]))));
    expect(items.map((f) => f.severity)).toEqual(['high', 'critical', 'critical', 'medium', 'medium', 'low', 'low', 'info', 'high', 'medium', 'low', 'info', 'medium']);
  });

  it('finds a Terraform address in the message of a .tf result, never in code', async () => {
    const results = [
      { ruleId: 'R1', message: { text: 'resource "aws_s3_bucket" "logs" has no versioning' }, locations: at('modules/s3/main.tf', 12) },
      { ruleId: 'R1', message: { text: 'Bucket module.storage.aws_s3_bucket.data is public' }, locations: at('main.tf') },
      { ruleId: 'R1', message: { text: 'user_data.id flows into a path' }, locations: at('src/app.ts') },
    ];
    const [block, bare, code] = findingsOf(await collect(sarifParser, textStream(log(results))));
    expect(block!.details.terraform_address).toBe('aws_s3_bucket.logs');
    expect(block!.resource.uid).toBe('modules/s3/main.tf#aws_s3_bucket.logs');
    expect(block!.title).toBe('aws_s3_bucket.logs (modules/s3/main.tf:12): resource "aws_s3_bucket" "logs" has no versioning');
    expect(bare!.details.terraform_address).toBe('module.storage.aws_s3_bucket.data');
    expect(code!.details.terraform_address).toBeUndefined();
    expect(code!.resource.uid).toBe('src/app.ts');
  });

  it("falls back to the rule's short description for a result without a message, and qualifies a partial fingerprint by its rule", async () => {
    const results = [{ ruleId: 'R1', locations: at('main.tf', 4), partialFingerprints: { primaryLocationLineHash: 'abc:1' } }];
    const [finding] = findingsOf(await collect(sarifParser, textStream(log(results))));
    expect(finding!.title).toBe('main.tf:4: Rule one');
    expect(finding!.source_finding_id).toBe('R1/abc:1');
    expect(finding!.source).toBe('checkov');
  });

  it('finds the rule by its position among all the rules the driver lists, a bad entry included', async () => {
    const rules = ['not a rule', { id: 'R2', shortDescription: { text: 'Rule two' }, properties: { 'security-severity': '9.1' } }];
    const [finding] = findingsOf(await collect(sarifParser, textStream(log([{ ruleId: 'R2', ruleIndex: 1, locations: at('x.tf', 1) }], rules))));
    expect(finding).toMatchObject({ title: 'x.tf:1: Rule two', severity: 'critical' });
  });

  it('names the source after the tool, without its edition', () => {
    expect(['Trivy', 'Semgrep OSS', 'KICS', 'checkov', 'terrascan', 'Microsoft Code Analysis'].map(sourceName)).toEqual([
      'trivy',
      'semgrep',
      'kics',
      'checkov',
      'terrascan',
      'microsoft-code-analysis',
    ]);
    expect(normalizeUri('file:///home/ci/repo/main%20file.tf')).toBe('/home/ci/repo/main file.tf');
    expect(normalizeUri('./infra\\prod\\main.tf')).toBe('infra/prod/main.tf');
  });
});

describe('SARIF runs', () => {
  it('reads artifacts and logical locations a result gives by index into its run', async () => {
    const run = {
      tool: { driver: { name: 'checkov', rules: [{ id: 'R1' }] } },
      artifacts: [{ location: { uri: 'infra/main.tf' } }],
      logicalLocations: [{ name: 'logs', kind: 'aws_s3_bucket' }],
      results: [
        { ruleId: 'R1', message: { text: 'x' }, locations: [{ physicalLocation: { artifactLocation: { index: 0 }, region: { startLine: 2 } }, logicalLocations: [{ index: 0 }] }] },
      ],
    };
    const [finding] = findingsOf(await collect(sarifParser, textStream(JSON.stringify({ version: '2.1.0', runs: [run] }))));
    expect(finding!.location).toEqual({ uri: 'infra/main.tf', start_line: 2 });
    expect(finding!.details.terraform_address).toBe('aws_s3_bucket.logs');
  });

  it('says when a run failed: null results are an error, a failed invocation warns that its results may be incomplete', async () => {
    const result = { ruleId: 'R1', message: { text: 'x' }, locations: at('main.tf') };
    const runs = [
      { tool: { driver: { name: 'tfsec' } }, results: null },
      { tool: { driver: { name: 'tfsec' } }, invocations: [{ executionSuccessful: false }], results: [result] },
    ];
    const items = await collect(sarifParser, textStream(JSON.stringify({ version: '2.1.0', runs })));
    expect(items.map((i) => i.kind)).toEqual(['error', 'error', 'finding']);
    expect(errorsOf(items).map((e) => e.message)).toEqual([
      'run 0: results is null: the tool did not complete',
      'run 1 (tfsec): the tool reports its execution failed, so its results may be incomplete',
    ]);
  });

  it('streams the runs: the first run is read before the file ends', async () => {
    const run = { tool: { driver: { name: 'kics' } }, results: [{ ruleId: 'R1', message: { text: 'x' }, locations: at('main.tf') }] };
    const file = generatedArray('{"version": "2.1.0", "runs": [', run, 100_000, ']}');
    const items = await take(sarifParser, file.stream, 10);
    expect(findingsOf(items)).toHaveLength(10);
    expect(file.produced()).toBeLessThan(2_000);
  });
});

describe('SARIF detection', () => {
  it.each(SAMPLES)('recognises %s', (name) => {
    expect(sarifParser.detect(head(name))).toBe(true);
  });

  it.each(OTHER_FORMATS)('claims no other format: %s', (name) => {
    expect(sarifParser.detect(head(name))).toBe(false);
  });
});

describe('broken SARIF files', () => {
  it('refuses a truncated file naming the byte offset', async () => {
    const cut = Buffer.from(fixtureText(SEMGREP)).subarray(0, 50_000);
    const { items, error } = await collectUntilError(sarifParser, textStream(cut));
    expect(error).toBeInstanceOf(MalformedImportError);
    expect((error as MalformedImportError).offset).toBe(50_000);
    expect((error as MalformedImportError).message).toMatch(/byte 50000/);
    // The run is held whole (its rules may follow its results): a cut run yields nothing.
    expect(items).toEqual([]);
  });

  it('lists a result that is a string or lacks a ruleId or a location, and reads the rest', async () => {
    const good = { ruleId: 'R1', message: { text: 'x' }, locations: at('main.tf') };
    const results = ['not a result', { message: { text: 'x' }, locations: at('main.tf') }, good, { ruleId: 'R1', message: { text: 'x' } }, good];
    const items = await collect(sarifParser, textStream(log(results)));
    expect(items.map((i) => i.kind)).toEqual(['error', 'error', 'finding', 'error', 'finding']);
    expect(errorsOf(items)).toEqual([
      { kind: 'error', record: 0, message: 'expected a SARIF result object, got a string' },
      { kind: 'error', record: 1, message: 'a result without ruleId' },
      { kind: 'error', record: 3, message: 'result of R1: no location (locations[0].physicalLocation.artifactLocation.uri)' },
    ]);
  });

  it('lists a run without a tool name and reads the next run, numbering results across runs', async () => {
    const result = { ruleId: 'R1', message: { text: 'x' }, locations: at('main.tf') };
    const runs = [
      { tool: { driver: { name: 'tfsec' } }, results: [result, result] },
      { tool: { driver: {} }, results: [result] },
      { tool: { driver: { name: 'Trivy' } }, results: [result] },
    ];
    const items = await collect(sarifParser, textStream(JSON.stringify({ version: '2.1.0', runs })));
    expect(items.map((i) => (i.kind === 'finding' ? i.source : i.kind === 'error' ? `error@${i.record}` : i.kind))).toEqual(['tfsec', 'tfsec', 'error@2', 'trivy']);
    expect(errorsOf(items)[0]!.message).toBe('run 1: a run without tool.driver.name');
  });

  it('refuses {} and a top-level array as malformed, and reads a log with no runs as no findings', async () => {
    await expect(collect(sarifParser, textStream('{}'))).rejects.toThrow(MalformedImportError);
    await expect(collect(sarifParser, textStream('[{"tool": {}}]'))).rejects.toThrow(/"runs" array/);
    expect(await collect(sarifParser, textStream('{"version": "2.1.0", "runs": []}'))).toEqual([]);
  });
});
