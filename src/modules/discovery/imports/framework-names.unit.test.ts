import { describe, expect, it } from 'vitest';
import { mapRequirements } from './framework-names.js';

describe('scanner framework names onto our catalogs', () => {
  it("maps Prowler's NIST, SOC 2, PCI 4.0 and CIS 7.0 requirement ids to controls that exist", () => {
    const { mappings, unmapped } = mapRequirements(
      [
        { framework: 'NIST-800-53-Revision-5', requirement: 'ac_2_1' },
        { framework: 'NIST-800-53-Revision-5', requirement: 'ac_3' },
        { framework: 'SOC2', requirement: 'cc_6_1' },
        { framework: 'PCI-4.0', requirement: '1.2.5.1' },
        { framework: 'CIS-7.0', requirement: '2.1.1' },
      ],
      'aws',
    );
    expect(mappings).toEqual([
      { framework: 'nist-800-53', control_id: 'AC-2(1)' },
      { framework: 'nist-800-53', control_id: 'AC-3' },
      { framework: 'soc2', control_id: 'CC6.1' },
      { framework: 'pci-dss', control_id: '1.2.5' },
      { framework: 'cis-aws', control_id: '2.1.1' },
    ]);
    expect(unmapped).toEqual([]);
  });

  it('keeps other versions, other providers, unknown frameworks and missing controls unmapped', () => {
    const requirements = [
      { framework: 'CIS-1.4', requirement: '1.20' },
      { framework: 'CIS-7.0', requirement: '2.1.1' },
      { framework: 'ENS-RD2022', requirement: 'op.exp.8' },
      { framework: 'NIST-800-53-Revision-5', requirement: 'zz_99' },
    ];
    const { mappings, unmapped } = mapRequirements(requirements, 'azure');
    expect(mappings).toEqual([]);
    expect(unmapped).toEqual(requirements);
  });

  it("maps Prowler's keys of the Prowler-carried frameworks, by Prowler's requirement id or ours", () => {
    const { mappings, unmapped } = mapRequirements(
      [
        { framework: 'HIPAA', requirement: '164_308_a_1_ii_a' },
        { framework: 'ISO27001-2022', requirement: 'A.8.15' },
        { framework: 'NIST-CSF-2.0', requirement: 'ds_1' },
        { framework: 'NIST-800-171-Revision-2', requirement: '3_1_1' },
        { framework: 'FedRAMP-Low-Revision-4', requirement: 'ac-2' },
        { framework: 'FedRamp-Moderate-Revision-4', requirement: 'ac-2-12-a' },
        { framework: 'GDPR', requirement: 'article_32' },
        { framework: 'AWS-Foundational-Security-Best-Practices', requirement: 'S3.1' },
        { framework: 'CISA', requirement: 'your-data-1' },
        { framework: 'hipaa', requirement: '164.312(b)' },
        { framework: 'HIPAA', requirement: '164_999_z' },
        { framework: 'ISO27001-2013', requirement: 'A.12.4.1' },
      ],
      'aws',
    );
    expect(mappings).toEqual([
      { framework: 'hipaa', control_id: '164.308(a)(1)(ii)(A)' },
      { framework: 'iso-27001', control_id: 'A.8.15' },
      { framework: 'nist-csf', control_id: 'PR.DS-1' },
      { framework: 'nist-800-171', control_id: '3.1.1' },
      { framework: 'fedramp-low', control_id: 'AC-2' },
      { framework: 'fedramp-moderate', control_id: 'AC-2(12)(a)' },
      { framework: 'gdpr', control_id: 'Art.32' },
      { framework: 'aws-fsbp', control_id: 'S3.1' },
      { framework: 'cisa', control_id: 'your-data-1' },
      { framework: 'hipaa', control_id: '164.312(b)' },
    ]);
    expect(unmapped).toEqual([
      { framework: 'HIPAA', requirement: '164_999_z' },
      { framework: 'ISO27001-2013', requirement: 'A.12.4.1' },
    ]);
  });
});
