#!/usr/bin/env node
/**
 * Writes the catalogs of the frameworks the service carries only as Prowler ships them (HIPAA, ISO/IEC
 * 27001:2022, NIST CSF 2.0, NIST SP 800-171 rev 2, FedRAMP Low and Moderate rev 4, FedRAMP 20x KSI Low,
 * GDPR, AWS Foundational Security Best Practices, CISA Cyber Essentials) into content/frameworks/, and
 * their section of content/frameworks/README.md (between the prowler-frameworks markers).
 *
 *   node scripts/content/build-prowler-frameworks.mjs /work/shared/data [outDir]
 *
 * Input: compliance-mappings/prowler-aws/compliance/<file>.json, prowler-cloud/prowler @ 3e000faa
 * (Apache-2.0; provenance in the data folder's SOURCES.md). Each requirement becomes one control with the
 * Prowler checks it lists (`checks`): our rules count toward it through the checks they reproduce. The
 * other Prowler AWS files are versions of the four frameworks build-frameworks.mjs writes (CIS 1.4-6.0,
 * PCI DSS 3.2.1, NIST SP 800-53 rev 4) and are not loaded.
 * Deterministic: running it twice on the same data gives byte-identical files. No dependencies beyond Node.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const dataDir = process.argv[2];
const outDir = resolve(process.argv[3] ?? join(here, '..', '..', 'content', 'frameworks'));
if (!dataDir) {
  console.error('usage: node scripts/content/build-prowler-frameworks.mjs <path to shared data folder> [outDir]');
  process.exit(2);
}

const RETRIEVED = '2026-11-23';
const PROWLER = {
  repository: 'prowler-cloud/prowler',
  commit: '3e000faa3109230b748e4418a13c11c9e59f5cfb',
  commitDate: '2026-08-21',
  license: 'Apache-2.0 (repository LICENSE)',
  dir: 'compliance-mappings/prowler-aws/compliance',
  repoDir: 'prowler/compliance/aws',
};

/** The words after a leading label: "3.1.1 Limit system access" -> "Limit system access". */
const afterFirstWord = (name) => name.replace(/^\S+\s*/, '').trim();
/** A long statement cut at a word boundary, for titles taken from a description. */
function shortTitle(text, max = 200) {
  const clean = text.replace(/\s+/g, ' ').trim();
  if (clean.length <= max) return clean;
  const cut = clean.slice(0, max - 1);
  return `${cut.slice(0, cut.lastIndexOf(' '))}…`;
}
/** "ac-2-12-a" -> "AC-2(12)(a)": the family and number, then each further part in parentheses. */
function nistStyleId(prowlerId) {
  const [family, number, ...rest] = prowlerId.split('-');
  return `${family.toUpperCase()}-${number}${rest.map((p) => `(${p})`).join('')}`;
}
/** "164_308_a_1_ii_a" -> "164.308(a)(1)(ii)(A)": the CFR section, then paragraph levels (the fourth level is upper case). */
function hipaaId(prowlerId) {
  const [part, section, ...levels] = prowlerId.split('_');
  return `${part}.${section}${levels.map((l, i) => `(${i === 3 ? l.toUpperCase() : l})`).join('')}`;
}
const capitalised = (s) => s.replace(/\b[a-z]/g, (c) => c.toUpperCase());

/**
 * One entry per framework: our id, the Prowler file, how a requirement becomes a control (id, title,
 * family) and a note on the choices. `licence` adds what the framework's own text is under; `version`
 * names the version where Prowler's file has none.
 */
const FRAMEWORKS = [
  {
    id: 'hipaa',
    version: 'Security Rule (45 CFR 164)',
    file: 'hipaa_aws.json',
    licence: 'The HIPAA Security Rule (45 CFR Part 164) is a U.S. federal regulation (public domain).',
    control: (r) => ({ id: hipaaId(r.Id), title: afterFirstWord(r.Name) }),
    idRule: "id = the 45 CFR citation rebuilt from Prowler's `Id` (`164_308_a_1_ii_a` -> `164.308(a)(1)(ii)(A)`), title = `Name` without its leading citation",
  },
  {
    id: 'iso-27001',
    file: 'iso27001_2022_aws.json',
    licence: "ISO/IEC 27001:2022 is (c) ISO/IEC; Prowler's file carries only Annex A control ids, names and summaries.",
    control: (r) => ({ id: r.Id, title: r.Name.trim() }),
    family: (a) => a.Category,
    idRule: "id = Prowler's `Id` (the Annex A control, `A.5.1`), title = `Name`, family = `Attributes[0].Category`",
  },
  {
    id: 'nist-csf',
    file: 'nist_csf_2.0_aws.json',
    licence: 'The NIST Cybersecurity Framework is a work of the U.S. Government (public domain).',
    control: (r) => ({ id: r.Name.trim(), title: shortTitle(r.Description) }),
    idRule: "id = Prowler's `Name` (the subcategory, `GV.OC-1`, where Prowler's `Id` is `oc_1`), title = `Description`, family = `Section`, subsection = `SubSection`",
  },
  {
    id: 'nist-800-171',
    version: 'Rev. 2',
    file: 'nist_800_171_revision_2_aws.json',
    licence: 'NIST SP 800-171 is a work of the U.S. Government (public domain).',
    control: (r) => ({ id: r.Id.replaceAll('_', '.'), title: shortTitle(afterFirstWord(r.Name)) }),
    idRule: "id = the requirement number from Prowler's `Id` (`3_1_1` -> `3.1.1`), title = `Name` without its leading number",
  },
  {
    id: 'fedramp-low',
    version: 'Rev. 4',
    file: 'fedramp_low_revision_4_aws.json',
    licence: 'FedRAMP baselines and NIST SP 800-53 rev 4 are works of the U.S. Government (public domain).',
    control: (r) => ({ id: nistStyleId(r.Id), title: r.Name.replace(/\s*\([A-Z]{2}-\d+\)\s*$/, '').trim() }),
    idRule: "id = the NIST SP 800-53 rev 4 control from Prowler's `Id` (`ac-2` -> `AC-2`), title = `Name` without the trailing id",
  },
  {
    id: 'fedramp-moderate',
    version: 'Rev. 4',
    file: 'fedramp_moderate_revision_4_aws.json',
    licence: 'FedRAMP baselines and NIST SP 800-53 rev 4 are works of the U.S. Government (public domain).',
    control: (r) => {
      const id = nistStyleId(r.Id);
      const rest = r.Name.startsWith(id) || /^[A-Z]{2}-\d/.test(r.Name) ? afterFirstWord(r.Name) : r.Name.replace(/\s*\([A-Z]{2}-[\d()]+\)\s*$/, '');
      return { id, title: rest.trim() || shortTitle(r.Description) };
    },
    idRule:
      "id = the NIST SP 800-53 rev 4 control (and statement parts) from Prowler's `Id` (`ac-2-12-a` -> `AC-2(12)(a)`), title = `Name` without the id, or `Description` where the name is only an id; the duplicate requirement `ir-4-1` is merged (its checks united)",
  },
  {
    id: 'fedramp-20x-ksi-low',
    file: 'fedramp_20x_ksi_low_aws.json',
    licence: 'FedRAMP 20x Key Security Indicators are a work of the U.S. Government (public domain).',
    control: (r) => ({ id: r.Id.toUpperCase(), title: r.Name.replace(/^[^:]+:\s*/, '').trim() }),
    idRule: "id = Prowler's `Id` upper-cased (`ksi-cmt` -> `KSI-CMT`), title = `Name` after its label",
  },
  {
    id: 'gdpr',
    version: 'Regulation (EU) 2016/679',
    file: 'gdpr_aws.json',
    licence: 'Regulation (EU) 2016/679; EU legislation is reusable under Commission Decision 2011/833/EU.',
    control: (r) => ({ id: r.Id.replace(/^article_(\d+)$/, 'Art.$1'), title: r.Name.replace(/^Article \d+\s*/, '').trim() }),
    idRule: 'id = the article (`article_25` -> `Art.25`, as the questionnaire templates write it), title = `Name` without "Article N"',
  },
  {
    id: 'aws-fsbp',
    version: '1.0.0',
    file: 'aws_foundational_security_best_practices_aws.json',
    licence: "The control ids and titles are AWS Security Hub's; Prowler's file carries them.",
    control: (r) => ({ id: r.Id, title: r.Name.trim() }),
    idRule: "id = Prowler's `Id` (the Security Hub control, `S3.1`), title = `Name`, family = `Section` (the service)",
  },
  {
    id: 'cisa',
    version: 'Cyber Essentials',
    file: 'cisa_aws.json',
    licence: 'CISA Cyber Essentials is a work of the U.S. Government (public domain).',
    control: (r) => ({ id: r.Id, title: shortTitle(r.Description) }),
    family: (a) => capitalised(a.Section),
    idRule: "id = Prowler's `Id` (`your-systems-1`), title = `Description` (Prowler's `Name` is only a label), family = `Section` capitalised",
  },
];

function build(spec) {
  const raw = JSON.parse(readFileSync(join(dataDir, PROWLER.dir, spec.file), 'utf8'));
  const controls = [];
  const byId = new Map();
  const merged = [];
  for (const r of raw.Requirements) {
    const attrs = r.Attributes?.[0] ?? {};
    const { id, title } = spec.control(r);
    if (!id || !title) throw new Error(`${spec.file}: requirement ${r.Id} gives no id or title`);
    const existing = byId.get(id);
    if (existing) {
      if (existing.prowler_id !== r.Id) throw new Error(`${spec.file}: ${r.Id} and ${existing.prowler_id} both become ${id}`);
      existing.checks = [...new Set([...existing.checks, ...r.Checks])].sort();
      merged.push(r.Id);
      continue;
    }
    const control = {
      id,
      title,
      family: (spec.family ? spec.family(attrs) : attrs.Section)?.trim() || raw.Framework,
      ...(attrs.SubSection ? { subsection: attrs.SubSection.trim() } : {}),
      ...(id !== r.Id ? { prowler_id: r.Id } : {}),
      checks: [...new Set(r.Checks)].sort(),
    };
    byId.set(id, { ...control, prowler_id: r.Id });
    controls.push(control);
  }
  for (const c of controls) c.checks = byId.get(c.id).checks;
  const key = raw.Version ? `${raw.Framework}-${raw.Version}` : raw.Framework;
  const path = `${PROWLER.repoDir}/${spec.file}`;
  const mapped = controls.filter((c) => c.checks.length > 0).length;
  return {
    id: spec.id,
    name: raw.Name.trim(),
    version: raw.Version || spec.version,
    default_enabled: false,
    prowler: { framework: raw.Framework, version: raw.Version ?? '', compliance_key: key },
    source: {
      title: raw.Name.trim(),
      url: `https://github.com/${PROWLER.repository}/blob/${PROWLER.commit}/${path}`,
      repository: PROWLER.repository,
      path,
      commit: PROWLER.commit,
      commitDate: PROWLER.commitDate,
      license: `${PROWLER.license}. ${spec.licence}`,
      retrieved: RETRIEVED,
      transformation: `One control per Prowler requirement, in the file's order: ${spec.idRule}; family = \`Attributes[0].Section\` unless said otherwise; \`checks\` = the requirement's \`Checks\` (Prowler check ids), deduplicated and sorted; \`prowler_id\` = Prowler's \`Id\` where our id differs. Descriptions and Prowler's other attributes are not copied.`,
    },
    notes: `${controls.length} requirements, ${mapped} of them with at least one Prowler check (the others are assessed by questionnaire or attestation only).${merged.length ? ` Duplicate Prowler ids merged: ${merged.join(', ')}.` : ''}`,
    controls,
  };
}

/** Every AWS check id Prowler has a metadata file for at the commit: what a catalog's checks are checked against. */
const metadata = JSON.parse(readFileSync(join(dataDir, 'compliance-mappings/prowler-aws/aws_checks_metadata.json'), 'utf8'));
const knownChecks = [...new Set(metadata.map((m) => m.CheckID))].sort();
const known = new Set(knownChecks);

const built = FRAMEWORKS.map(build);
for (const doc of built) {
  const retired = [...new Set(doc.controls.flatMap((c) => c.checks))].filter((c) => !known.has(c)).sort();
  // Retired or renamed checks older framework files still list: kept (an imported finding may name them), flagged.
  doc.checks_without_metadata = retired;
  if (retired.length) doc.notes += ` ${retired.length} listed checks have no metadata file at this commit (retired or renamed): ${retired.join(', ')}.`;
  writeFileSync(join(outDir, `${doc.id}.json`), JSON.stringify(doc, null, 2) + '\n');
}
writeFileSync(
  join(outDir, 'prowler-aws-checks.json'),
  JSON.stringify(
    {
      source: {
        title: 'Prowler AWS check ids (one per prowler/providers/aws/services/*/*/*.metadata.json)',
        repository: PROWLER.repository,
        commit: PROWLER.commit,
        license: PROWLER.license,
        retrieved: RETRIEVED,
        transformation: 'The CheckID of every metadata file, sorted; nothing else is copied.',
      },
      checks: knownChecks,
    },
    null,
    2,
  ) + '\n',
);

const section = [
  '<!-- prowler-frameworks:start (written by scripts/content/build-prowler-frameworks.mjs) -->',
  '## Frameworks carried as Prowler ships them',
  '',
  'Written by `node scripts/content/build-prowler-frameworks.mjs /work/shared/data`. One catalog per framework that',
  "Prowler's AWS compliance files cover beyond the four above; the other Prowler AWS files are older versions of those",
  'four (CIS 1.4-6.0, PCI DSS 3.2.1, NIST SP 800-53 rev 4) and are not loaded. Each control carries `checks`, the',
  'Prowler check ids its requirement lists: a built-in rule counts toward it when one of its `prowler_checks` is',
  'among them (the crosswalk for these frameworks), and an imported finding when the scanner names the requirement',
  "(`prowler.compliance_key` is the key Prowler's outputs use). `default_enabled: false`: a tenant turns them on in",
  '`PUT /settings/compliance`. A requirement no rule, finding, question or attestation covers is not applicable',
  '(not assessed), never passing.',
  '',
  '`prowler-aws-checks.json` lists every AWS check id Prowler has a metadata file for at the commit (from',
  "`aws_checks_metadata.json`); a catalog's `checks_without_metadata` names the checks it lists that are not among",
  "them (retired or renamed; kept, since an imported finding may name them). Titles are Prowler's, with its slips:",
  'HIPAA 164.308(a)(4)(ii)(C) is titled as (B) ("Access authorization"), FedRAMP Low AC-3 "Account Management".',
  '`test/content/prowler-frameworks.unit.test.ts` checks every file.',
  '',
  `Source of every file: \`${PROWLER.repository}\` @ \`${PROWLER.commit}\` (${PROWLER.commitDate}), \`${PROWLER.repoDir}/<file>\`; licence ${PROWLER.license}.`,
  '',
  '| id | framework | Prowler file | compliance key | requirements | with checks | checks |',
  '|---|---|---|---|---|---|---|',
  ...built.map((d, i) => {
    const checks = new Set(d.controls.flatMap((c) => c.checks)).size;
    return `| \`${d.id}\` | ${d.name} | \`${FRAMEWORKS[i].file}\` | \`${d.prowler.compliance_key}\` | ${d.controls.length} | ${d.controls.filter((c) => c.checks.length).length} | ${checks} |`;
  }),
  '',
  ...built.map(
    (d) =>
      `- \`${d.id}\`: ${d.source.transformation.replace(/^One control per Prowler requirement, in the file's order: /, '').split(';')[0]}. ${d.notes} Licence: ${d.source.license}`,
  ),
  '<!-- prowler-frameworks:end -->',
].join('\n');
const readmePath = join(outDir, 'README.md');
const readme = readFileSync(readmePath, 'utf8');
const start = readme.indexOf('<!-- prowler-frameworks:start');
const end = readme.indexOf('<!-- prowler-frameworks:end -->');
const next = start >= 0 && end > start ? readme.slice(0, start) + section + readme.slice(end + '<!-- prowler-frameworks:end -->'.length) : `${readme.trimEnd()}\n\n${section}\n`;
writeFileSync(readmePath, next);
console.log(built.map((d) => `${d.id}: ${d.controls.length}`).join(', '));
