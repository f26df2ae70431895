import { describe, expect, it } from 'vitest';
import { instanceName, parseResourceAddress, terraformIdentifier } from './terraform-address.js';
import { safeRelativePath } from './terraform-source.js';

describe('parseResourceAddress', () => {
  it('reads root, module-qualified and instance addresses', () => {
    expect(parseResourceAddress('aws_s3_bucket.logs')).toEqual({ module: '', type: 'aws_s3_bucket', name: 'logs', index: '' });
    expect(parseResourceAddress('module.storage.aws_s3_bucket.logs')).toEqual({
      module: 'module.storage.',
      type: 'aws_s3_bucket',
      name: 'logs',
      index: '',
    });
    expect(parseResourceAddress('module.a["x.y"].module.b[0].aws_s3_bucket.logs["k.1"]')).toEqual({
      module: 'module.a["x.y"].module.b[0].',
      type: 'aws_s3_bucket',
      name: 'logs',
      index: '["k.1"]',
    });
    expect(parseResourceAddress('aws_instance.web-1[3]')).toMatchObject({ name: 'web-1', index: '[3]' });
  });

  it('rejects data sources, modules and malformed addresses', () => {
    for (const bad of ['data.aws_ami.al2023', 'module.storage', 'aws_s3_bucket', 'aws_s3_bucket.', '.logs', 'aws_s3_bucket.logs.extra', 'a.b[x]', '']) {
      expect(parseResourceAddress(bad), bad).toBeUndefined();
    }
  });
});

describe('terraformIdentifier', () => {
  it('makes valid, conventional identifiers', () => {
    expect(terraformIdentifier('acme-payments-data')).toBe('acme_payments_data');
    expect(terraformIdentifier('Orders DB (prod)')).toBe('orders_db_prod');
    expect(terraformIdentifier('123456789012')).toBe('r_123456789012');
    expect(terraformIdentifier('_x')).toBe('x');
    expect(terraformIdentifier('arn:aws:elasticloadbalancing:eu-west-1:1:listener/app/web/5/f')).toBe('arn_aws_elasticloadbalancing_eu_west_1_1_listener_app_web_5_f');
    expect(terraformIdentifier('')).toBe('r_unnamed');
    expect(terraformIdentifier('✓')).toBe('r_unnamed');
  });
});

describe('instanceName', () => {
  it('is the name, with the instance key when there is one', () => {
    expect(instanceName(parseResourceAddress('aws_s3_bucket.logs')!)).toBe('logs');
    expect(instanceName(parseResourceAddress('aws_s3_bucket.logs[0]')!)).toBe('logs_0');
    expect(instanceName(parseResourceAddress('aws_s3_bucket.logs["eu-west-1"]')!)).toBe('logs_eu_west_1');
  });
});

describe('safeRelativePath', () => {
  it('keeps plain relative paths and refuses the rest', () => {
    expect(safeRelativePath('main.tf')).toBe('main.tf');
    expect(safeRelativePath('./modules\\storage/main.tf')).toBe('modules/storage/main.tf');
    for (const bad of ['', '/etc/main.tf', '../main.tf', 'a/../../main.tf', 'C:/main.tf', 'a//b.tf', 'a/./b.tf']) {
      expect(safeRelativePath(bad), bad).toBeUndefined();
    }
  });
});
