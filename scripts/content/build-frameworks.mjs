#!/usr/bin/env node
/**
 * Regenerates the framework control catalogs in content/frameworks/ from the shared public data set.
 *
 *   node scripts/content/build-frameworks.mjs /work/shared/data [outDir]
 *
 * Inputs (paths relative to the data folder; provenance in each folder's SOURCES.md):
 *   oscal/nist-800-53-rev5/NIST_SP-800-53_rev5_catalog.v5.0.1.json        usnistgov/oscal-content @ a849dbca (CC0)
 *   oscal/nist-800-53-rev5/NIST_SP-800-53_rev5_{LOW,MODERATE,HIGH}-baseline_profile.json   @ 941c978d (CC0)
 *   compliance-mappings/prowler-aws/compliance/{cis_*,pci_4.0,soc2,nist_800_53_revision_5}_aws.json
 *                                                                        prowler-cloud/prowler @ 3e000faa (Apache-2.0)
 *   compliance-mappings/prowler-aws/aws_checks_metadata.json             same
 *
 * Outputs: nist-800-53.json, cis-aws.json, pci-dss.json, soc2.json, crosswalk.json, README.md.
 * The service never runs this script (it reads the JSON files it wrote); it documents how they were made.
 * Output is deterministic: running it twice on the same data gives byte-identical files.
 * No dependencies beyond Node (>= 20).
 */
import { readFileSync, writeFileSync, mkdirSync, readdirSync } from 'node:fs';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const dataDir = process.argv[2];
const outDir = resolve(process.argv[3] ?? join(here, '..', '..', 'content', 'frameworks'));
if (!dataDir) {
  console.error('usage: node scripts/content/build-frameworks.mjs <path to shared data folder> [outDir]');
  process.exit(2);
}

/** Date the shared data folder was assembled (its files were copied in on this day). */
const RETRIEVED = '2026-11-23';

const OSCAL = {
  repository: 'usnistgov/oscal-content',
  license: 'Public domain in the US (work of the U.S. Government) plus CC0 1.0 worldwide (repository LICENSE.md)',
  catalog: {
    file: 'oscal/nist-800-53-rev5/NIST_SP-800-53_rev5_catalog.v5.0.1.json',
    path: 'nist.gov/SP800-53/rev5/json/NIST_SP-800-53_rev5_catalog.json',
    commit: 'a849dbca4649e0cc626fefdd46cf5232c8308f4c',
    commitDate: '2021-06-08',
  },
  profiles: {
    low: 'NIST_SP-800-53_rev5_LOW-baseline_profile.json',
    moderate: 'NIST_SP-800-53_rev5_MODERATE-baseline_profile.json',
    high: 'NIST_SP-800-53_rev5_HIGH-baseline_profile.json',
  },
  profilesCommit: '941c978d14c57379fbf6f7fb388f675067d5bff7',
  profilesCommitDate: '2024-02-13',
};

const PROWLER = {
  repository: 'prowler-cloud/prowler',
  commit: '3e000faa3109230b748e4418a13c11c9e59f5cfb',
  commitDate: '2026-08-21',
  license: 'Apache-2.0 (repository LICENSE)',
  dir: 'compliance-mappings/prowler-aws/compliance',
  repoDir: 'prowler/compliance/aws',
};
const prowlerUrl = (name) => `https://github.com/${PROWLER.repository}/blob/${PROWLER.commit}/${PROWLER.repoDir}/${name}`;

// ---------------------------------------------------------------------------------------------------------------
// Hand-written data (from knowledge of the published standards; not present in the shared data set)
// ---------------------------------------------------------------------------------------------------------------

/** PCI DSS v4.0 principal requirements and the two appendices that Prowler's file references. */
const PCI_FAMILIES = {
  1: 'Requirement 1: Install and Maintain Network Security Controls',
  2: 'Requirement 2: Apply Secure Configurations to All System Components',
  3: 'Requirement 3: Protect Stored Account Data',
  4: 'Requirement 4: Protect Cardholder Data with Strong Cryptography During Transmission Over Open, Public Networks',
  5: 'Requirement 5: Protect All Systems and Networks from Malicious Software',
  6: 'Requirement 6: Develop and Maintain Secure Systems and Software',
  7: 'Requirement 7: Restrict Access to System Components and Cardholder Data by Business Need to Know',
  8: 'Requirement 8: Identify Users and Authenticate Access to System Components',
  9: 'Requirement 9: Restrict Physical Access to Cardholder Data',
  10: 'Requirement 10: Log and Monitor All Access to System Components and Cardholder Data',
  11: 'Requirement 11: Test Security of Systems and Networks Regularly',
  12: 'Requirement 12: Support Information Security with Organizational Policies and Programs',
  A1: 'Appendix A1: Additional PCI DSS Requirements for Multi-Tenant Service Providers',
  A2: 'Appendix A2: Additional PCI DSS Requirements for Entities Using SSL/Early TLS for Card-Present POS POI Terminal Connections',
  A3: 'Appendix A3: Designated Entities Supplemental Validation (DESV)',
};

/** SOC 2 categories (series of the 2017 Trust Services Criteria), in TSC order. */
const SOC2_FAMILIES = [
  ['CC1', 'Control Environment'],
  ['CC2', 'Communication and Information'],
  ['CC3', 'Risk Assessment'],
  ['CC4', 'Monitoring Activities'],
  ['CC5', 'Control Activities'],
  ['CC6', 'Logical and Physical Access Controls'],
  ['CC7', 'System Operations'],
  ['CC8', 'Change Management'],
  ['CC9', 'Risk Mitigation'],
  ['A1', 'Availability'],
  ['C1', 'Confidentiality'],
  ['PI1', 'Processing Integrity'],
  ['P', 'Privacy'],
];

/**
 * The 61 criteria of the AICPA 2017 Trust Services Criteria (TSP section 100, criteria text unchanged by the 2022
 * revised points of focus). The TSC gives each criterion a statement, not a short title; the statement is the
 * title. Written from knowledge of the TSC; where Prowler's soc2_aws.json carries the same criterion (its
 * requirement `Name`), the script checks that the two agree word for word (see SOC2_PROWLER_KNOWN_DIFFERENCES).
 */
const SOC2_CRITERIA = [
  ['CC1.1', 'COSO Principle 1: The entity demonstrates a commitment to integrity and ethical values.'],
  ['CC1.2', 'COSO Principle 2: The board of directors demonstrates independence from management and exercises oversight of the development and performance of internal control.'],
  [
    'CC1.3',
    'COSO Principle 3: Management establishes, with board oversight, structures, reporting lines, and appropriate authorities and responsibilities in the pursuit of objectives.',
  ],
  ['CC1.4', 'COSO Principle 4: The entity demonstrates a commitment to attract, develop, and retain competent individuals in alignment with objectives.'],
  ['CC1.5', 'COSO Principle 5: The entity holds individuals accountable for their internal control responsibilities in the pursuit of objectives.'],
  ['CC2.1', 'COSO Principle 13: The entity obtains or generates and uses relevant, quality information to support the functioning of internal control.'],
  [
    'CC2.2',
    'COSO Principle 14: The entity internally communicates information, including objectives and responsibilities for internal control, necessary to support the functioning of internal control.',
  ],
  ['CC2.3', 'COSO Principle 15: The entity communicates with external parties regarding matters affecting the functioning of internal control.'],
  ['CC3.1', 'COSO Principle 6: The entity specifies objectives with sufficient clarity to enable the identification and assessment of risks relating to objectives.'],
  [
    'CC3.2',
    'COSO Principle 7: The entity identifies risks to the achievement of its objectives across the entity and analyzes risks as a basis for determining how the risks should be managed.',
  ],
  ['CC3.3', 'COSO Principle 8: The entity considers the potential for fraud in assessing risks to the achievement of objectives.'],
  ['CC3.4', 'COSO Principle 9: The entity identifies and assesses changes that could significantly impact the system of internal control.'],
  [
    'CC4.1',
    'COSO Principle 16: The entity selects, develops, and performs ongoing and/or separate evaluations to ascertain whether the components of internal control are present and functioning.',
  ],
  [
    'CC4.2',
    'COSO Principle 17: The entity evaluates and communicates internal control deficiencies in a timely manner to those parties responsible for taking corrective action, including senior management and the board of directors, as appropriate.',
  ],
  [
    'CC5.1',
    'COSO Principle 10: The entity selects and develops control activities that contribute to the mitigation of risks to the achievement of objectives to acceptable levels.',
  ],
  ['CC5.2', 'COSO Principle 11: The entity also selects and develops general control activities over technology to support the achievement of objectives.'],
  ['CC5.3', 'COSO Principle 12: The entity deploys control activities through policies that establish what is expected and in procedures that put policies into action.'],
  [
    'CC6.1',
    "The entity implements logical access security software, infrastructure, and architectures over protected information assets to protect them from security events to meet the entity's objectives.",
  ],
  [
    'CC6.2',
    'Prior to issuing system credentials and granting system access, the entity registers and authorizes new internal and external users whose access is administered by the entity. For those users whose access is administered by the entity, user system credentials are removed when user access is no longer authorized.',
  ],
  [
    'CC6.3',
    "The entity authorizes, modifies, or removes access to data, software, functions, and other protected information assets based on roles, responsibilities, or the system design and changes, giving consideration to the concepts of least privilege and segregation of duties, to meet the entity's objectives.",
  ],
  [
    'CC6.4',
    "The entity restricts physical access to facilities and protected information assets (for example, data center facilities, back-up media storage, and other sensitive locations) to authorized personnel to meet the entity's objectives.",
  ],
  [
    'CC6.5',
    "The entity discontinues logical and physical protections over physical assets only after the ability to read or recover data and software from those assets has been diminished and is no longer required to meet the entity's objectives.",
  ],
  ['CC6.6', 'The entity implements logical access security measures to protect against threats from sources outside its system boundaries.'],
  [
    'CC6.7',
    "The entity restricts the transmission, movement, and removal of information to authorized internal and external users and processes, and protects it during transmission, movement, or removal to meet the entity's objectives.",
  ],
  ['CC6.8', "The entity implements controls to prevent or detect and act upon the introduction of unauthorized or malicious software to meet the entity's objectives."],
  [
    'CC7.1',
    'To meet its objectives, the entity uses detection and monitoring procedures to identify (1) changes to configurations that result in the introduction of new vulnerabilities, and (2) susceptibilities to newly discovered vulnerabilities.',
  ],
  [
    'CC7.2',
    "The entity monitors system components and the operation of those components for anomalies that are indicative of malicious acts, natural disasters, and errors affecting the entity's ability to meet its objectives; anomalies are analyzed to determine whether they represent security events.",
  ],
  [
    'CC7.3',
    'The entity evaluates security events to determine whether they could or have resulted in a failure of the entity to meet its objectives (security incidents) and, if so, takes actions to prevent or address such failures.',
  ],
  [
    'CC7.4',
    'The entity responds to identified security incidents by executing a defined incident response program to understand, contain, remediate, and communicate security incidents, as appropriate.',
  ],
  ['CC7.5', 'The entity identifies, develops, and implements activities to recover from identified security incidents.'],
  [
    'CC8.1',
    'The entity authorizes, designs, develops or acquires, configures, documents, tests, approves, and implements changes to infrastructure, data, software, and procedures to meet its objectives.',
  ],
  ['CC9.1', 'The entity identifies, selects, and develops risk mitigation activities for risks arising from potential business disruptions.'],
  ['CC9.2', 'The entity assesses and manages risks associated with vendors and business partners.'],
  [
    'A1.1',
    'The entity maintains, monitors, and evaluates current processing capacity and use of system components (infrastructure, data, and software) to manage capacity demand and to enable the implementation of additional capacity to help meet its objectives.',
  ],
  [
    'A1.2',
    'The entity authorizes, designs, develops or acquires, implements, operates, approves, maintains, and monitors environmental protections, software, data back-up processes, and recovery infrastructure to meet its objectives.',
  ],
  ['A1.3', 'The entity tests recovery plan procedures supporting system recovery to meet its objectives.'],
  ['C1.1', "The entity identifies and maintains confidential information to meet the entity's objectives related to confidentiality."],
  ['C1.2', "The entity disposes of confidential information to meet the entity's objectives related to confidentiality."],
  [
    'PI1.1',
    'The entity obtains or generates, uses, and communicates relevant, quality information regarding the objectives related to processing, including definitions of data processed and product and service specifications, to support the use of products and services.',
  ],
  [
    'PI1.2',
    "The entity implements policies and procedures over system inputs, including controls over completeness and accuracy, to result in products, services, and reporting to meet the entity's objectives.",
  ],
  ['PI1.3', "The entity implements policies and procedures over system processing to result in products, services, and reporting to meet the entity's objectives."],
  [
    'PI1.4',
    "The entity implements policies and procedures to make available or deliver output completely, accurately, and timely in accordance with specifications to meet the entity's objectives.",
  ],
  [
    'PI1.5',
    "The entity implements policies and procedures to store inputs, items in processing, and outputs completely, accurately, and timely in accordance with system specifications to meet the entity's objectives.",
  ],
  [
    'P1.1',
    "The entity provides notice to data subjects about its privacy practices to meet the entity's objectives related to privacy. The notice is updated and communicated to data subjects in a timely manner for changes to the entity's privacy practices, including changes in the use of personal information, to meet the entity's objectives related to privacy.",
  ],
  [
    'P2.1',
    "The entity communicates choices available regarding the collection, use, retention, disclosure, and disposal of personal information to the data subjects and the consequences, if any, of each choice. Explicit consent for the collection, use, retention, disclosure, and disposal of personal information is obtained from data subjects or other authorized persons, if required. Such consent is obtained only for the intended purpose of the information to meet the entity's objectives related to privacy. The entity's basis for determining implicit consent for the collection, use, retention, disclosure, and disposal of personal information is documented.",
  ],
  ['P3.1', "Personal information is collected consistent with the entity's objectives related to privacy."],
  [
    'P3.2',
    "For information requiring explicit consent, the entity communicates the need for such consent, as well as the consequences of a failure to provide consent for the request for personal information, and obtains the consent prior to the collection of the information to meet the entity's objectives related to privacy.",
  ],
  ['P4.1', "The entity limits the use of personal information to the purposes identified in the entity's objectives related to privacy."],
  ['P4.2', "The entity retains personal information consistent with the entity's objectives related to privacy."],
  ['P4.3', "The entity securely disposes of personal information to meet the entity's objectives related to privacy."],
  [
    'P5.1',
    "The entity grants identified and authenticated data subjects the ability to access their stored personal information for review and, upon request, provides physical or electronic copies of that information to data subjects to meet the entity's objectives related to privacy. If access is denied, data subjects are informed of the denial and reason for such denial, as required, to meet the entity's objectives related to privacy.",
  ],
  [
    'P5.2',
    "The entity corrects, amends, or appends personal information based on information provided by data subjects and communicates such information to third parties, as committed or required, to meet the entity's objectives related to privacy. If a request for correction is denied, data subjects are informed of the denial and reason for such denial to meet the entity's objectives related to privacy.",
  ],
  [
    'P6.1',
    "The entity discloses personal information to third parties with the explicit consent of data subjects, and such consent is obtained prior to disclosure to meet the entity's objectives related to privacy.",
  ],
  [
    'P6.2',
    "The entity creates and retains a complete, accurate, and timely record of authorized disclosures of personal information to meet the entity's objectives related to privacy.",
  ],
  [
    'P6.3',
    "The entity creates and retains a complete, accurate, and timely record of detected or reported unauthorized disclosures (including breaches) of personal information to meet the entity's objectives related to privacy.",
  ],
  [
    'P6.4',
    "The entity obtains privacy commitments from vendors and other third parties who have access to personal information to meet the entity's objectives related to privacy. The entity assesses those parties' compliance on a periodic and as-needed basis and takes corrective action, if necessary.",
  ],
  [
    'P6.5',
    "The entity obtains commitments from vendors and other third parties with access to personal information to notify the entity in the event of actual or suspected unauthorized disclosures of personal information. Such notifications are reported to appropriate personnel and acted on in accordance with established incident response procedures to meet the entity's objectives related to privacy.",
  ],
  ['P6.6', "The entity provides notification of breaches and incidents to affected data subjects, regulators, and others to meet the entity's objectives related to privacy."],
  [
    'P6.7',
    "The entity provides data subjects with an accounting of the personal information held and disclosure of the data subjects' personal information, upon the data subjects' request, to meet the entity's objectives related to privacy.",
  ],
  ['P7.1', "The entity collects and maintains accurate, up-to-date, complete, and relevant personal information to meet the entity's objectives related to privacy."],
  [
    'P8.1',
    "The entity implements a process for receiving, addressing, resolving, and communicating the resolution of inquiries, complaints, and disputes from data subjects and others and periodically monitors compliance to meet the entity's objectives related to privacy. Corrections and other necessary actions related to identified deficiencies are made or taken in a timely manner.",
  ],
];

/**
 * Prowler soc2_aws.json requirements whose `Name` does not carry the 2017 criterion text of their id. The build
 * fails if any other Prowler name disagrees with SOC2_CRITERIA, so these are the only ones not confirmed by data.
 */
const SOC2_PROWLER_KNOWN_DIFFERENCES = {
  'A1.1':
    "Prowler's cc_a_1_1 is named with the text of A1.2, but its id and its points of focus (Measures Current Usage, Forecasts Capacity, Makes Changes Based on Forecasts) are those of A1.1; the crosswalk follows the id.",
  'PI1.2': "Prowler's name carries the superseded 2016 TSP wording ('System inputs are measured and recorded completely, accurately, and timely ...').",
  'PI1.3': "Prowler's name carries the superseded 2016 TSP wording ('Data is processed completely, accurately, and timely as authorized ...').",
  'PI1.4': "Prowler's name carries the superseded 2016 TSP wording ('System outputs are complete, accurate, distributed only to intended parties, and retained ...').",
  'PI1.5': "Prowler's name carries the superseded 2016 TSP wording ('Stored data is maintained complete, accurate, and protected from unauthorized modification ...').",
};

// ---------------------------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------------------------

function readJson(rel) {
  return JSON.parse(readFileSync(join(dataDir, rel), 'utf8'));
}
function writeJson(name, value) {
  writeFileSync(join(outDir, name), JSON.stringify(value, null, 2) + '\n');
}
function fail(msg) {
  throw new Error(`build-frameworks: ${msg}`);
}
function assert(cond, msg) {
  if (!cond) fail(msg);
}
/** Collapses whitespace and uses straight apostrophes, as the catalogs do. */
function clean(s) {
  return String(s ?? '')
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[\u201c\u201d]/g, '"')
    .replace(/\s+/g, ' ')
    .trim();
}
/** Compares dotted ids numerically (1.2 < 1.10 < 2.1); an alphabetic prefix (PCI appendices A1, A3) sorts last. */
function compareDotted(a, b) {
  const key = (id) => id.split('.').map((p) => (/^\d+$/.test(p) ? [0, Number(p), ''] : [1, Number(p.replace(/\D/g, '')) || 0, p]));
  const ka = key(a);
  const kb = key(b);
  for (let i = 0; i < Math.max(ka.length, kb.length); i++) {
    const x = ka[i];
    const y = kb[i];
    if (!x) return -1;
    if (!y) return 1;
    if (x[0] !== y[0]) return x[0] - y[0];
    if (x[2] !== y[2]) return x[2] < y[2] ? -1 : 1;
    if (x[1] !== y[1]) return x[1] - y[1];
  }
  return 0;
}
function uniqueIds(controls, name) {
  const seen = new Set();
  for (const c of controls) {
    assert(c.id && c.title && c.family, `${name}: control without id/title/family: ${JSON.stringify(c)}`);
    assert(!seen.has(c.id), `${name}: duplicate id ${c.id}`);
    seen.add(c.id);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// NIST SP 800-53 Rev. 5
// ---------------------------------------------------------------------------------------------------------------

/**
 * `ac-2` -> `AC-2`, `ac-2.1` -> `AC-2(1)`; a statement fragment such as `ac-2_smt.k` names its control; a bare
 * family id (SA-12 is incorporated into `#sr`) becomes the family code `SR`.
 */
function nistDisplayId(oscalId) {
  if (/^[a-z]{2}$/.test(oscalId)) return oscalId.toUpperCase();
  const m = /^([a-z]{2})-(\d+)(?:\.(\d+))?$/.exec(oscalId.split('_')[0]);
  if (!m) fail(`unexpected OSCAL control id ${oscalId}`);
  return `${m[1].toUpperCase()}-${m[2]}${m[3] ? `(${m[3]})` : ''}`;
}

/** Statement prose of a control (its `statement` part and items), used only to match Prowler's descriptions. */
function statementProse(control) {
  const out = [];
  const walk = (parts) => {
    for (const p of parts ?? []) {
      if (p.name !== 'statement' && p.name !== 'item') continue;
      if (p.prose) out.push(p.prose);
      walk(p.parts);
    }
  };
  walk(control.parts);
  return out.join(' ');
}

function buildNist() {
  const catalog = readJson(OSCAL.catalog.file).catalog;
  const baselineOf = new Map();
  const profileMeta = {};
  for (const [level, file] of Object.entries(OSCAL.profiles)) {
    const profile = readJson(`oscal/nist-800-53-rev5/${file}`).profile;
    profileMeta[level] = { file, title: profile.metadata.title, version: profile.metadata.version, count: 0 };
    for (const imp of profile.imports) {
      assert(!imp['include-all'], `${file}: include-all is not expected`);
      for (const inc of imp['include-controls'] ?? []) {
        for (const id of inc['with-ids']) {
          if (!baselineOf.has(id)) baselineOf.set(id, []);
          baselineOf.get(id).push(level);
          profileMeta[level].count++;
        }
      }
    }
  }

  const controls = [];
  const prose = new Map(); // display id -> statement prose
  const seenOscal = new Set();
  let families = 0;
  for (const group of catalog.groups) {
    assert(group.class === 'family', `group ${group.id} is not a family`);
    families++;
    const family = clean(group.title);
    const add = (ctl, parent) => {
      const id = nistDisplayId(ctl.id);
      const label = ctl.props?.find((p) => p.name === 'label')?.value;
      assert(label === id, `label ${label} of ${ctl.id} differs from ${id}`);
      seenOscal.add(ctl.id);
      const withdrawn = ctl.props?.some((p) => p.name === 'status' && p.value === 'withdrawn');
      const entry = { id, title: clean(ctl.title), family };
      if (parent) entry.parent = parent;
      entry.baselines = baselineOf.get(ctl.id) ?? [];
      if (withdrawn) {
        entry.withdrawn = true;
        for (const [rel, key] of [
          ['incorporated-into', 'incorporatedInto'],
          ['moved-to', 'movedTo'],
        ]) {
          const to = [...new Set((ctl.links ?? []).filter((l) => l.rel === rel).map((l) => nistDisplayId(l.href.replace(/^#/, ''))))];
          if (to.length) entry[key] = to;
        }
      }
      controls.push(entry);
      prose.set(id, statementProse(ctl));
      for (const child of ctl.controls ?? []) add(child, id);
    };
    for (const ctl of group.controls) add(ctl, undefined);
  }
  for (const id of baselineOf.keys()) assert(seenOscal.has(id), `baseline control ${id} is not in the catalog`);
  for (const c of controls) assert(!c.withdrawn || c.baselines.length === 0, `withdrawn ${c.id} is in a baseline`);
  uniqueIds(controls, 'nist-800-53');

  const base = controls.filter((c) => !c.parent).length;
  const enh = controls.length - base;
  const withdrawn = controls.filter((c) => c.withdrawn).length;
  const counts = {
    families,
    controls: base,
    enhancements: enh,
    total: controls.length,
    withdrawn,
    low: profileMeta.low.count,
    moderate: profileMeta.moderate.count,
    high: profileMeta.high.count,
  };

  const doc = {
    id: 'nist-800-53',
    name: 'NIST SP 800-53 Revision 5',
    version: clean(catalog.metadata.version),
    source: {
      title: clean(catalog.metadata.title),
      url: `https://github.com/${OSCAL.repository}/blob/${OSCAL.catalog.commit}/${OSCAL.catalog.path}`,
      repository: OSCAL.repository,
      path: OSCAL.catalog.path,
      commit: OSCAL.catalog.commit,
      commitDate: OSCAL.catalog.commitDate,
      license: OSCAL.license,
      retrieved: RETRIEVED,
      baselineProfiles: Object.entries(profileMeta).map(([level, p]) => ({
        baseline: level,
        title: clean(p.title),
        version: p.version,
        path: `nist.gov/SP800-53/rev5/json/${p.file}`,
        commit: OSCAL.profilesCommit,
        commitDate: OSCAL.profilesCommitDate,
        controls: p.count,
      })),
      transformation:
        'Walked the OSCAL catalog groups (families) and their controls and enhancements in catalog order. Ids are the ' +
        "controls' `label` props (upper-case display form: `ac-2` -> `AC-2`, `ac-2.1` -> `AC-2(1)`); titles are the OSCAL " +
        'titles; family = the group title. Controls whose props hold status=withdrawn are kept with `withdrawn: true` and ' +
        'their incorporated-into / moved-to links as display ids (statement references such as `ac-2_smt.k` become their ' +
        'control, AC-2; SA-12, incorporated into the whole SR family, gets `SR`). `baselines` lists the LOW/MODERATE/HIGH profiles (5.1.1+u4) whose include-controls name the control; ' +
        'every profile id resolves in this 5.0.1 catalog.',
    },
    notes:
      `Full catalog ${doc_version(catalog)}: ${families} families, ${base} controls and ${enh} enhancements (${controls.length} entries), ` +
      `${withdrawn} of them withdrawn. The newest full catalog (5.1.1/5.2.0) was not obtainable (see the shared data SOURCES.md); ` +
      `titles are those of 5.0.1. Baselines come from the 5.1.1+u4 profiles: LOW ${counts.low}, MODERATE ${counts.moderate}, HIGH ${counts.high} ids.`,
    controls,
  };
  return { doc, counts, prose, byId: new Map(controls.map((c) => [c.id, c])) };
}
function doc_version(catalog) {
  return `SP 800-53 Rev. 5 version ${catalog.metadata.version} (OSCAL ${catalog.metadata['oscal-version']})`;
}

// ---------------------------------------------------------------------------------------------------------------
// CIS AWS Foundations Benchmark
// ---------------------------------------------------------------------------------------------------------------

/** Checks a Prowler CIS file: ids unique and dotted-numeric, every requirement has a title and a section. */
function cisProblems(file) {
  const problems = [];
  const seen = new Set();
  for (const r of file.Requirements) {
    if (!/^\d+(\.\d+)+$/.test(r.Id)) problems.push(`malformed id ${r.Id}`);
    if (seen.has(r.Id)) problems.push(`duplicate id ${r.Id}`);
    seen.add(r.Id);
    if (!clean(r.Description)) problems.push(`${r.Id} has no title`);
    if (!clean(r.Attributes?.[0]?.Section)) problems.push(`${r.Id} has no section`);
  }
  return problems;
}

function buildCis() {
  const files = readdirSync(join(dataDir, PROWLER.dir))
    .filter((f) => /^cis_[\d.]+_aws\.json$/.test(f))
    .map((name) => ({ name, file: readJson(`${PROWLER.dir}/${name}`) }))
    .map((x) => ({ ...x, version: x.name.replace(/^cis_|_aws\.json$/g, ''), problems: cisProblems(x.file) }))
    .sort((a, b) => compareDotted(b.version, a.version));
  const chosen = files.find((x) => x.problems.length === 0);
  assert(chosen, 'no complete CIS file');
  const survey = files.map((x) => `${x.version} (${x.file.Name}: ${x.file.Requirements.length} requirements${x.problems.length ? `; ${x.problems.join(', ')}` : '; complete'})`);
  const newer = files.filter((x) => compareDotted(x.version, chosen.version) > 0);

  const controls = chosen.file.Requirements.map((r) => {
    const a = r.Attributes[0];
    const entry = { id: r.Id, title: clean(r.Description), family: clean(a.Section) };
    if (clean(a.SubSection)) entry.subsection = clean(a.SubSection);
    if (a.Profile) entry.profile = clean(a.Profile);
    if (a.AssessmentStatus) entry.assessment = clean(a.AssessmentStatus);
    return entry;
  }).sort((a, b) => compareDotted(a.id, b.id));
  uniqueIds(controls, 'cis-aws');
  const families = [...new Set(controls.map((c) => c.family))];
  const fullVersion = /v(\d+\.\d+\.\d+)/.exec(chosen.file.Name)?.[1] ?? chosen.file.Version;
  const rootMfa = files
    .map((x) => `${x.file.Requirements.find((r) => /^Ensure MFA is enabled for the 'root' user account/.test(clean(r.Description)))?.Id ?? 'absent'} in ${x.version}`)
    .join(', ');

  const doc = {
    id: 'cis-aws',
    name: 'CIS Amazon Web Services Foundations Benchmark',
    version: fullVersion,
    source: {
      title: clean(chosen.file.Name),
      url: prowlerUrl(chosen.name),
      repository: PROWLER.repository,
      path: `${PROWLER.repoDir}/${chosen.name}`,
      commit: PROWLER.commit,
      commitDate: PROWLER.commitDate,
      license: `${PROWLER.license}. The benchmark text itself is (c) Center for Internet Security; Prowler's file carries only recommendation titles and summaries.`,
      retrieved: RETRIEVED,
      versionChoice:
        `Chose ${chosen.file.Name} (Prowler file ${chosen.name}): it is the newest CIS AWS version in the Prowler snapshot and its ` +
        `${controls.length} requirement ids are unique, well-formed and all carry a title and a section. ` +
        (newer.length ? `Newer but rejected: ${newer.map((x) => x.version).join(', ')}. ` : '') +
        `Versions surveyed: ${survey.join('; ')}.`,
      transformation:
        'One control per Prowler requirement: id = `Id`, title = the requirement `Description` (the CIS recommendation title), ' +
        'family = `Attributes[0].Section`, `subsection` = `Attributes[0].SubSection` when present, `profile` (Level 1/2) and ' +
        '`assessment` (Automated/Manual) from the attributes. Sorted by numeric id. Long-form text (rationale, audit, ' +
        'remediation) is not copied.',
    },
    notes:
      `Sections of ${fullVersion} in Prowler's file: ${families.join(', ')}; ids differ from ` +
      `older versions (e.g. "Ensure MFA is enabled for the 'root' user account" is ${rootMfa}). Ids with three parts ` +
      '(2.1.1, 3.1.4) are recommendations under a subsection; they have no parent control.',
    controls,
  };
  return { doc, counts: { total: controls.length, families: families.length }, file: chosen, byId: new Set(controls.map((c) => c.id)) };
}

// ---------------------------------------------------------------------------------------------------------------
// PCI DSS v4.0
// ---------------------------------------------------------------------------------------------------------------

const PCI_SECTION = /^([A-Z]?\d+(?:\.\d+)+):\s*(.+?)\s*$/;

function pciFamily(id) {
  const top = id.split('.')[0];
  const fam = PCI_FAMILIES[top];
  assert(fam, `no PCI family for ${id}`);
  return fam;
}

function buildPci() {
  const name = 'pci_4.0_aws.json';
  const file = readJson(`${PROWLER.dir}/${name}`);
  const groups = new Map(); // "1.2" -> title
  const reqs = new Map(); // "1.2.5" -> { items: [] }
  const itemIds = new Set();
  const mismatched = [];
  for (const r of file.Requirements) {
    const m = PCI_SECTION.exec(r.Attributes?.[0]?.Section ?? '');
    assert(m, `PCI requirement ${r.Id} has an unparseable Section`);
    const [, reqId, groupTitle] = m;
    const groupId = reqId.split('.').slice(0, 2).join('.');
    const gt = clean(groupTitle);
    assert(!groups.has(groupId) || groups.get(groupId) === gt, `PCI group ${groupId} has two titles`);
    groups.set(groupId, gt);
    if (!reqs.has(reqId)) reqs.set(reqId, { items: [] });
    assert(!itemIds.has(r.Id), `duplicate PCI item ${r.Id}`);
    itemIds.add(r.Id);
    if (!r.Id.startsWith(`${reqId}.`)) mismatched.push(`${r.Id} (listed under ${reqId})`);
    reqs.get(reqId).items.push({ id: r.Id, title: clean(r.Description) });
  }

  const controls = [];
  for (const [id, title] of groups) controls.push({ id, title, family: pciFamily(id) });
  const present = new Set([...groups.keys(), ...reqs.keys()]);
  for (const [id, { items }] of reqs) {
    const parts = id.split('.');
    let parent;
    for (let n = parts.length - 1; n >= 2 && !parent; n--) {
      const cand = parts.slice(0, n).join('.');
      if (present.has(cand)) parent = cand;
    }
    items.sort((a, b) => compareDotted(a.id, b.id));
    controls.push({ id, title: groups.get(parts.slice(0, 2).join('.')), family: pciFamily(id), parent, prowlerItems: items });
  }
  controls.sort((a, b) => compareDotted(a.id, b.id));
  uniqueIds(controls, 'pci-dss');
  const families = [...new Set(controls.map((c) => c.family))];
  const collisions = [...itemIds].filter((i) => reqs.has(i)).sort(compareDotted);

  const doc = {
    id: 'pci-dss',
    name: 'Payment Card Industry Data Security Standard (PCI DSS)',
    version: '4.0',
    source: {
      title: clean(file.Name),
      url: prowlerUrl(name),
      repository: PROWLER.repository,
      path: `${PROWLER.repoDir}/${name}`,
      commit: PROWLER.commit,
      commitDate: PROWLER.commitDate,
      license: `${PROWLER.license}. PCI DSS itself is (c) PCI Security Standards Council; only ids and section titles are used here.`,
      retrieved: RETRIEVED,
      transformation:
        "Prowler's 1,679 'requirements' are AWS-check-level items numbered under a PCI DSS requirement (the `Section` " +
        "attribute, '1.2.5: Network security controls (NSCs) are configured and maintained.'). The controls here are the " +
        `${reqs.size} distinct PCI DSS requirement ids of those Sections, plus the ${groups.size} two-level sections (1.2, 8.3, A1.1 ...) ` +
        "that contain them, whose titles are the text after the colon. Each requirement's Prowler items are kept in " +
        '`prowlerItems` ({id, title = item Description}). `parent` = the nearest enclosing id present in this file. ' +
        'family = the principal requirement (1-12) or appendix, with its official v4.0 title (written by hand: Prowler has none).',
    },
    notes:
      "Sub-items: Prowler's item ids (1.2.5.1 ... 1.2.5.17) are not PCI DSS requirements but numbered test items (mostly AWS Config " +
      "rule descriptions, 'Checks if ...'); they are kept under their requirement in `prowlerItems` and are not controls. They are " +
      `ambiguous: ${collisions.length} item ids are also real PCI DSS requirement ids (e.g. item 10.2.1.1 is the first test item of ` +
      '10.2.1, while requirement 10.2.1.1 has items 10.2.1.1.1 ...), so rules and the crosswalk must only use control ids. ' +
      `Items filed under a Section they do not extend: ${mismatched.join(', ') || 'none'}. ` +
      "Titles: Prowler carries no per-requirement text, only the title of the two-level section, so every requirement's title is " +
      "its section's title (8.3.6 reads 'Strong authentication for users and administrators is established and managed.'). " +
      `Coverage: only the ${reqs.size} requirements that Prowler maps to AWS checks are present, not the full ~250 requirements of ` +
      'PCI DSS v4.0 (none of requirement 9, and e.g. 1.2.1 is absent); the full standard is not in the shared data.',
    controls,
  };
  return {
    doc,
    counts: { total: controls.length, groups: groups.size, requirements: reqs.size, items: itemIds.size, families: families.length, collisions: collisions.length },
    file,
    byId: new Set(controls.map((c) => c.id)),
    sectionOfItem: new Map(file.Requirements.map((r) => [r.Id, PCI_SECTION.exec(r.Attributes[0].Section)[1]])),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// SOC 2 (2017 Trust Services Criteria)
// ---------------------------------------------------------------------------------------------------------------

/** `cc_6_1` -> CC6.1, `cc_a_1_1` -> A1.1, `cc_c_1_2` -> C1.2, `pi_1_3` -> PI1.3, `p_4_1` -> P4.1. */
function soc2Id(prowlerId) {
  let m = /^cc_(\d+)_(\d+)$/.exec(prowlerId);
  if (m) return `CC${m[1]}.${m[2]}`;
  m = /^(?:cc_)?([a-z]+)_(\d+)_(\d+)$/.exec(prowlerId);
  if (m) return `${m[1].toUpperCase()}${m[2]}.${m[3]}`;
  return undefined;
}
function soc2Family(id) {
  const fam = SOC2_FAMILIES.find(([prefix]) => (prefix === 'P' ? /^P\d/.test(id) : id.startsWith(`${prefix}.`)));
  assert(fam, `no SOC 2 family for ${id}`);
  return fam[1];
}
const wordsOnly = (s) =>
  clean(s)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();

function buildSoc2() {
  const name = 'soc2_aws.json';
  const file = readJson(`${PROWLER.dir}/${name}`);
  const criteria = new Map(SOC2_CRITERIA);
  assert(criteria.size === 61, `expected 61 SOC 2 criteria, have ${criteria.size}`);
  const confirmed = [];
  const viaDescription = [];
  const fromProwler = new Set();
  for (const r of file.Requirements) {
    const id = soc2Id(r.Id);
    assert(id && criteria.has(id), `Prowler SOC 2 id ${r.Id} does not resolve`);
    fromProwler.add(id);
    const prowlerTitle = clean(r.Name).replace(/^\S+\s+/, '');
    // Prowler's name holds the criterion; for CC6.2 it holds only the first sentence and the description the whole.
    const text = wordsOnly(criteria.get(id));
    if (wordsOnly(prowlerTitle) === text) confirmed.push(id);
    else if (wordsOnly(r.Description).startsWith(text)) {
      confirmed.push(id);
      viaDescription.push(id);
    } else assert(SOC2_PROWLER_KNOWN_DIFFERENCES[id], `SOC 2 ${id}: Prowler name '${prowlerTitle}' differs from the TSC text`);
  }
  const controls = SOC2_CRITERIA.map(([id, title]) => ({ id, title, family: soc2Family(id) }));
  uniqueIds(controls, 'soc2');
  const handWritten = controls.filter((c) => !confirmed.includes(c.id)).map((c) => c.id);

  const doc = {
    id: 'soc2',
    name: 'SOC 2 - AICPA Trust Services Criteria',
    version: '2017 (with revised points of focus, 2022)',
    source: {
      title: 'AICPA TSP section 100, 2017 Trust Services Criteria for Security, Availability, Processing Integrity, Confidentiality, and Privacy (revised points of focus - 2022)',
      url: prowlerUrl(name),
      repository: PROWLER.repository,
      path: `${PROWLER.repoDir}/${name}`,
      commit: PROWLER.commit,
      commitDate: PROWLER.commitDate,
      license: `${PROWLER.license} for Prowler's file. The criteria text is (c) AICPA; it is quoted here as criterion titles.`,
      retrieved: RETRIEVED,
      transformation:
        `All 61 criteria of the 2017 TSC, in TSC order. Prowler's ${name} holds only ${file.Requirements.length} of them ` +
        `(${[...fromProwler].join(', ')}). Titles are the criterion statements (the TSC has no shorter official titles), written ` +
        `by hand in scripts/content/build-frameworks.mjs from knowledge of the TSC; ${confirmed.length} of them are confirmed word for ` +
        `word against Prowler's requirement name (or, for ${viaDescription.join(' and ')}, the start of its description), the other ` +
        `${handWritten.length} (${handWritten.join(', ')}) rest on the hand-written text alone. ` +
        'family = the criteria series (CC1 Control Environment ... CC9 Risk Mitigation, Availability, Confidentiality, ' +
        'Processing Integrity, Privacy). Prowler ids are mapped cc_6_1 -> CC6.1, cc_a_1_1 -> A1.1, cc_c_1_1 -> C1.1, pi_1_2 -> PI1.2.',
    },
    notes:
      'Points of focus are not included. Where Prowler differs from the TSC: ' +
      Object.entries(SOC2_PROWLER_KNOWN_DIFFERENCES)
        .map(([id, why]) => `${id}: ${why}`)
        .join(' '),
    controls,
  };
  return {
    doc,
    counts: { total: controls.length, families: new Set(controls.map((c) => c.family)).size, prowler: file.Requirements.length, confirmed: confirmed.length },
    file,
    byId: new Set(controls.map((c) => c.id)),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Crosswalk: Prowler check id -> requirement ids in each of the four frameworks
// ---------------------------------------------------------------------------------------------------------------

function wordSet(s) {
  const t = String(s)
    .replace(/\{\{[^}]*\}\}/g, ' ')
    .replace(/\[(?:Assignment|Selection)[^\]]*\]/g, ' ')
    .toLowerCase();
  return new Set((t.match(/[a-z]+/g) ?? []).filter((w) => w.length > 3));
}
/** Share of the words (> 3 letters, parameters removed) of `desc` that occur in the control's statement. */
function coverage(desc, controlProse) {
  const d = wordSet(desc);
  if (d.size === 0) return undefined;
  const c = wordSet(controlProse ?? '');
  let hit = 0;
  for (const w of d) if (c.has(w)) hit++;
  return hit / d.size;
}

/**
 * Prowler NIST ids: `ac_2_1` -> AC-2(1); a trailing statement item is dropped: `ac_2_3_a` -> AC-2(3), `ac_2_d_1` -> AC-2.
 * Prowler's file also loses the trailing zero of some numbers (cp_1_2 is CP-10(2), sc_7_2 is SC-7(20)): when the
 * mechanical id is unknown, withdrawn, or its statement shares under half the words of Prowler's description, and
 * the id with a zero restored matches the description (>= 90% of its words), the restored id is used.
 */
function resolveNistId(req, nist) {
  const t = req.Id.split('_');
  if (!/^[a-z]{2}$/.test(t[0]) || !/^\d+$/.test(t[1] ?? '')) return { id: undefined, reason: 'unparseable id' };
  const fam = t[0].toUpperCase();
  const enh = /^\d+$/.test(t[2] ?? '') ? t[2] : undefined;
  const make = (num, e) => `${fam}-${num}${e ? `(${e})` : ''}`;
  const mech = make(t[1], enh);
  const known = nist.byId.get(mech);
  const cov = coverage(req.Description, nist.prose.get(mech));
  const suspicious = !known || known.withdrawn || (cov !== undefined && cov < 0.5);
  if (suspicious && cov !== undefined) {
    const candidates = [make(`${t[1]}0`, enh)];
    if (enh) candidates.push(make(t[1], `${enh}0`));
    const best = candidates
      .filter((c) => nist.byId.has(c) && !nist.byId.get(c).withdrawn)
      .map((c) => ({ c, cov: coverage(req.Description, nist.prose.get(c)) }))
      .filter((x) => x.cov >= 0.9)
      .sort((a, b) => b.cov - a.cov)[0];
    if (best)
      return {
        id: best.c,
        mechanical: mech,
        corrected: true,
        why: `description matches ${best.c} (${Math.round(best.cov * 100)}% of words; ${Math.round((cov ?? 0) * 100)}% for ${mech}${known ? (known.withdrawn ? ', withdrawn' : '') : ', not in the catalog'})`,
      };
  }
  if (!known) return { id: undefined, mechanical: mech, reason: `${mech} is not in the catalog` };
  return { id: mech, mechanical: mech, mismatch: cov !== undefined && cov < 0.5 ? cov : undefined, withdrawn: known.withdrawn };
}

function buildCrosswalk(nist, cis, pci, soc2, frameworkOrder) {
  const nistFile = readJson(`${PROWLER.dir}/nist_800_53_revision_5_aws.json`);
  const metadata = readJson('compliance-mappings/prowler-aws/aws_checks_metadata.json');
  const knownChecks = new Set(metadata.map((m) => m.CheckID));
  const map = new Map(); // check -> { fw -> Set(ids) }
  const add = (check, fw, id) => {
    if (!map.has(check)) map.set(check, Object.fromEntries(frameworkOrder.map((f) => [f, new Set()])));
    map.get(check)[fw].add(id);
  };
  const stats = {};

  // NIST
  const corrections = [];
  const dropped = [];
  const mismatches = [];
  const keptWithdrawn = [];
  const nistIds = new Set();
  const seenReq = new Set();
  let nistDup = 0;
  for (const r of nistFile.Requirements) {
    if (seenReq.has(r.Id)) nistDup++;
    seenReq.add(r.Id);
    const res = resolveNistId(r, nist);
    if (res.corrected) corrections.push({ prowlerId: r.Id, mechanical: res.mechanical, resolved: res.id, evidence: res.why });
    if (!res.id) {
      dropped.push({ prowlerId: r.Id, reason: res.reason, checks: r.Checks.length });
      continue;
    }
    if (res.mismatch !== undefined) mismatches.push(`${r.Id} -> ${res.id}`);
    if (res.withdrawn) keptWithdrawn.push(`${r.Id} -> ${res.id}`);
    nistIds.add(res.id);
    for (const c of r.Checks) add(c, 'nist-800-53', res.id);
  }
  stats['nist-800-53'] = {
    file: 'nist_800_53_revision_5_aws.json',
    requirements: nistFile.Requirements.length,
    duplicateRequirementIds: nistDup,
    resolvedControls: nistIds.size,
    corrected: corrections.length,
    dropped: dropped.length,
  };

  // CIS
  for (const r of cis.file.file.Requirements) {
    assert(cis.byId.has(r.Id), `CIS ${r.Id} missing`);
    for (const c of r.Checks) add(c, 'cis-aws', r.Id);
  }
  stats['cis-aws'] = { file: cis.file.name, requirements: cis.file.file.Requirements.length, withChecks: cis.file.file.Requirements.filter((r) => r.Checks.length).length };

  // PCI: items map to the PCI DSS requirement of their Section
  const pciIds = new Set();
  for (const r of pci.file.Requirements) {
    const reqId = pci.sectionOfItem.get(r.Id);
    assert(pci.byId.has(reqId), `PCI ${reqId} missing`);
    if (r.Checks.length) pciIds.add(reqId);
    for (const c of r.Checks) add(c, 'pci-dss', reqId);
  }
  stats['pci-dss'] = {
    file: 'pci_4.0_aws.json',
    items: pci.file.Requirements.length,
    itemsWithChecks: pci.file.Requirements.filter((r) => r.Checks.length).length,
    requirementsWithChecks: pciIds.size,
  };

  // SOC 2
  for (const r of soc2.file.Requirements) {
    const id = soc2Id(r.Id);
    assert(soc2.byId.has(id), `SOC 2 ${id} missing`);
    for (const c of r.Checks) add(c, 'soc2', id);
  }
  stats.soc2 = { file: 'soc2_aws.json', requirements: soc2.file.Requirements.length, withChecks: soc2.file.Requirements.filter((r) => r.Checks.length).length };

  const order = {
    'nist-800-53': new Map(nist.doc.controls.map((c, i) => [c.id, i])),
    'cis-aws': new Map(cis.doc.controls.map((c, i) => [c.id, i])),
    'pci-dss': new Map(pci.doc.controls.map((c, i) => [c.id, i])),
    soc2: new Map(soc2.doc.controls.map((c, i) => [c.id, i])),
  };
  const checks = {};
  for (const check of [...map.keys()].sort()) {
    checks[check] = Object.fromEntries(frameworkOrder.map((fw) => [fw, [...map.get(check)[fw]].sort((a, b) => order[fw].get(a) - order[fw].get(b))]));
  }
  const checkIds = Object.keys(checks);
  const withoutMetadata = checkIds.filter((c) => !knownChecks.has(c));
  const inAll = checkIds.filter((c) => frameworkOrder.every((fw) => checks[c][fw].length)).length;
  const inTwoPlus = checkIds.filter((c) => frameworkOrder.filter((fw) => checks[c][fw].length).length >= 2).length;
  for (const fw of frameworkOrder) stats[fw].checks = checkIds.filter((c) => checks[c][fw].length).length;

  const doc = {
    source: {
      title: 'Prowler AWS compliance mappings (requirement -> Prowler check ids)',
      url: `https://github.com/${PROWLER.repository}/tree/${PROWLER.commit}/${PROWLER.repoDir}`,
      repository: PROWLER.repository,
      paths: [
        `${PROWLER.repoDir}/nist_800_53_revision_5_aws.json`,
        `${PROWLER.repoDir}/${cis.file.name}`,
        `${PROWLER.repoDir}/pci_4.0_aws.json`,
        `${PROWLER.repoDir}/soc2_aws.json`,
      ],
      commit: PROWLER.commit,
      commitDate: PROWLER.commitDate,
      license: PROWLER.license,
      retrieved: RETRIEVED,
      transformation:
        "For each requirement of the four Prowler files, every id in its `Checks` is mapped to the requirement's id in our " +
        'framework files (duplicate check ids within a requirement collapse). NIST: Prowler ids are normalised (ac_2_1 -> AC-2(1), ' +
        'ac_2_3_a -> AC-2(3), ac_2_d_1 -> AC-2), with the zero-restoring correction described in notes. CIS: ids as-is from the ' +
        `chosen version (${cis.file.name}; checks mapped only in other CIS versions are not included). PCI: each Prowler item ` +
        'maps to the PCI DSS requirement of its Section (item 1.2.5.3 -> 1.2.5), never to the item id. SOC 2: cc_6_1 -> CC6.1, ' +
        'cc_a_1_1 -> A1.1, pi_1_2 -> PI1.2. Two requirements in different frameworks are related when they share a check. ' +
        'Every framework key is present on every check (an empty array means that framework does not map the check). ' +
        'Checks and ids are sorted (checks alphabetically, ids in framework order).',
    },
    notes:
      `${checkIds.length} checks; ${inTwoPlus} are mapped in two or more frameworks, ${inAll} in all four. ` +
      `NIST: ${nistFile.Requirements.length} Prowler requirements (${nistDup} duplicate id) resolve to ${nistIds.size} controls; ` +
      `${dropped.length} dropped as unresolvable${dropped.length ? ` (${dropped.map((d) => d.prowlerId).join(', ')})` : ''}; ` +
      `${corrections.length} corrected where Prowler lost a trailing zero and its description is the text of the corrected control ` +
      `(${corrections.map((c) => `${c.prowlerId} -> ${c.resolved}, not ${c.mechanical}`).join('; ')}); without that correction ` +
      `${corrections.filter((c) => !nist.byId.has(c.mechanical)).length} would have been dropped and ` +
      `${corrections.filter((c) => nist.byId.get(c.mechanical)?.withdrawn).length} would have pointed at withdrawn controls. ` +
      "Kept by id although Prowler's description shares under half its words with that control's statement (it is another " +
      "control's text or rev. 4 wording, while Prowler's id, name and sub-group agree on the id): " +
      `${mismatches.join(', ') || 'none'}. ` +
      `Mapped to withdrawn controls: ${keptWithdrawn.join(', ') || 'none'}. ` +
      (withoutMetadata.length
        ? `${withoutMetadata.length} check ids have no metadata file in Prowler at this commit (retired or renamed checks; listed in checksWithoutMetadata).`
        : 'Every check id has a metadata file in aws_checks_metadata.json at this commit (checksWithoutMetadata is empty).'),
    frameworks: stats,
    nistIdCorrections: corrections,
    nistDropped: dropped,
    checksWithoutMetadata: withoutMetadata,
    checks,
  };
  return {
    doc,
    counts: {
      checks: checkIds.length,
      inTwoPlus,
      inAll,
      withoutMetadata: withoutMetadata.length,
      corrections: corrections.length,
      dropped: dropped.length,
      mismatches: mismatches.length,
      nistControls: nistIds.size,
      pciRequirements: pciIds.size,
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// README
// ---------------------------------------------------------------------------------------------------------------

function readme({ nist, cis, pci, soc2, xw }) {
  const n = nist.counts;
  const s = (doc) => doc.source;
  return `# Framework control catalogs

Generated by \`node scripts/content/build-frameworks.mjs /work/shared/data\` from public data (copies of it live in the
shared data folder, with provenance in its \`SOURCES.md\` files). Do not edit the JSON by hand: change the script and
rerun it. The service loads these files at start and never needs the shared data folder.

Every file has the same shape: \`{ id, name, version, source: { title, url, repository, path, commit, license,
retrieved, transformation, ... }, notes, controls: [{ id, title, family, parent?, ... }] }\`, with controls in the
framework's natural order and ids unique within the file. Checked by \`test/content/frameworks.unit.test.ts\`.

## nist-800-53.json — NIST SP 800-53 Rev. 5

- Source: \`${s(nist.doc).repository}\`, \`${s(nist.doc).path}\` @ \`${s(nist.doc).commit}\` (${s(nist.doc).commitDate}).
  Baselines: \`nist.gov/SP800-53/rev5/json/NIST_SP-800-53_rev5_{LOW,MODERATE,HIGH}-baseline_profile.json\` @ \`${OSCAL.profilesCommit}\` (${OSCAL.profilesCommitDate}, profile version 5.1.1+u4).
- Licence: ${OSCAL.license}.
- Version: **${nist.doc.version}** (OSCAL 1.0.0). It is the only full catalog available: the 5.1.1/5.2.0 catalogs were missing
  from every snapshot. Titles are 5.0.1's; the 5.1.1 baseline ids all resolve in it.
- Ids: upper-case display form from the OSCAL \`label\`: \`AC-2\`, enhancement \`AC-2(1)\` (OSCAL \`ac-2\`, \`ac-2.1\`).
  Enhancements have \`parent\`. \`family\` = family title (e.g. "Access Control"). \`baselines\` ⊆ ["low","moderate","high"].
  Withdrawn controls are kept with \`withdrawn: true\` and \`incorporatedInto\` / \`movedTo\`.
- Counts: ${n.families} families, ${n.controls} controls + ${n.enhancements} enhancements = **${n.total}** entries, ${n.withdrawn} withdrawn;
  baselines LOW ${n.low}, MODERATE ${n.moderate}, HIGH ${n.high}.

## cis-aws.json — CIS Amazon Web Services Foundations Benchmark

- Source: \`${s(cis.doc).repository}\`, \`${s(cis.doc).path}\` @ \`${s(cis.doc).commit}\` (${s(cis.doc).commitDate}).
- Licence: ${s(cis.doc).license}
- Version: **${cis.doc.version}**. ${s(cis.doc).versionChoice}
- Ids: the benchmark's recommendation numbers (\`2.4\`, \`3.1.1\`); title = recommendation title; \`family\` = section
  ("2 Identity and Access Management"); \`subsection\`, \`profile\` (Level 1/2), \`assessment\` (Automated/Manual) when given.
  ${cis.doc.notes}
- Counts: **${cis.counts.total}** recommendations in ${cis.counts.families} sections.

## pci-dss.json — PCI DSS v4.0

- Source: \`${s(pci.doc).repository}\`, \`${s(pci.doc).path}\` @ \`${s(pci.doc).commit}\` (${s(pci.doc).commitDate}).
- Licence: ${s(pci.doc).license}
- Version: **4.0** (the only PCI DSS v4 file in Prowler; \`pci_3.2.1_aws.json\` is the older standard).
- Ids: PCI DSS requirement numbers (\`1.2\`, \`1.2.5\`, \`10.2.1.1\`, \`A1.1.2\`); \`parent\` = nearest enclosing id in the file;
  \`family\` = principal requirement or appendix with its official title ("Requirement 8: Identify Users and Authenticate
  Access to System Components"). Prowler's check-level items are under \`prowlerItems\`, not controls.
- ${pci.doc.notes}
- Counts: **${pci.counts.total}** controls = ${pci.counts.groups} sections + ${pci.counts.requirements} requirements, in ${pci.counts.families} families; ${pci.counts.items} Prowler items.

## soc2.json — SOC 2 Trust Services Criteria (2017)

- Source: AICPA 2017 Trust Services Criteria (criterion text written into the script), cross-checked against
  \`${s(soc2.doc).repository}\`, \`${s(soc2.doc).path}\` @ \`${s(soc2.doc).commit}\` (${s(soc2.doc).commitDate}).
- Licence: ${s(soc2.doc).license}
- Version: **2017 TSC** (criteria unchanged by the 2022 revised points of focus).
- Ids: \`CC1.1\` … \`CC9.2\`, \`A1.1\` … \`A1.3\`, \`C1.1\`, \`C1.2\`, \`PI1.1\` … \`PI1.5\`, \`P1.1\` … \`P8.1\`. The TSC has no short
  titles, so \`title\` is the criterion statement. \`family\` = series name (CC6 → "Logical and Physical Access Controls").
- ${s(soc2.doc).transformation}
- ${soc2.doc.notes}
- Counts: **${soc2.counts.total}** criteria in ${soc2.counts.families} families (${soc2.counts.prowler} in Prowler, ${soc2.counts.confirmed} confirmed against it).

## crosswalk.json — cross-framework map through Prowler checks

- Source: \`${PROWLER.repository}\` @ \`${PROWLER.commit}\`: \`nist_800_53_revision_5_aws.json\`, \`${cis.file.name}\`,
  \`pci_4.0_aws.json\`, \`soc2_aws.json\` (\`Checks\` of each requirement). Licence: ${PROWLER.license}.
- Shape: \`checks[<prowler check id>] = { "nist-800-53": [...], "cis-aws": [...], "pci-dss": [...], "soc2": [...] }\`; every id
  exists in the framework file. Two requirements in different frameworks are related when they share a check.
- Counts: **${xw.counts.checks}** checks (${xw.counts.inTwoPlus} in two or more frameworks, ${xw.counts.inAll} in all four);
  NIST ids resolved to ${xw.counts.nistControls} controls, ${xw.counts.corrections} corrected, ${xw.counts.dropped} dropped;
  ${xw.counts.withoutMetadata} checks have no Prowler metadata (\`checksWithoutMetadata\`).
- ${xw.doc.notes}
`;
}

// ---------------------------------------------------------------------------------------------------------------

function main() {
  mkdirSync(outDir, { recursive: true });
  const nist = buildNist();
  const cis = buildCis();
  const pci = buildPci();
  const soc2 = buildSoc2();
  const frameworkOrder = ['nist-800-53', 'cis-aws', 'pci-dss', 'soc2'];
  const xw = buildCrosswalk(nist, cis, pci, soc2, frameworkOrder);

  writeJson('nist-800-53.json', nist.doc);
  writeJson('cis-aws.json', cis.doc);
  writeJson('pci-dss.json', pci.doc);
  writeJson('soc2.json', soc2.doc);
  writeJson('crosswalk.json', xw.doc);
  // Keeps the section scripts/content/build-prowler-frameworks.mjs writes (between its markers).
  const previous = (() => {
    try {
      return readFileSync(join(outDir, 'README.md'), 'utf8');
    } catch {
      return '';
    }
  })();
  const kept = /<!-- prowler-frameworks:start[\s\S]*<!-- prowler-frameworks:end -->/.exec(previous)?.[0];
  const text = readme({ nist, cis, pci, soc2, xw });
  writeFileSync(join(outDir, 'README.md'), kept ? `${text.trimEnd()}\n\n${kept}\n` : text);

  console.log(JSON.stringify({ outDir, nist: nist.counts, cis: { version: cis.doc.version, ...cis.counts }, pci: pci.counts, soc2: soc2.counts, crosswalk: xw.counts }, null, 2));
}

main();
