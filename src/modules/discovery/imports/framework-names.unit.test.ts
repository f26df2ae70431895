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
});
