import type { AddressInfo } from 'node:net';
import { inject } from 'vitest';
import { createTestApp, type TestApp, type TestAppOptions } from '../../harness/app.js';
import { audit } from '../../harness/compliance.js';
import { buildTenant, call, PASSWORD, type TenantFixture } from '../../harness/identity.js';
import { readDemoEstate } from '../../../src/modules/discovery/demo-estate.js';
import { MAX_BATCH } from '../../../src/modules/graph/schemas.js';

export interface ConsoleApp {
  t: TestApp;
  /** http://127.0.0.1:<port> of the real service, console and API. */
  base: string;
  tenant: TenantFixture;
  password: string;
  close(): Promise<void>;
}

/**
 * The real service on a loopback port over a fresh embedded database, its worker running, and a
 * tenant with one user per role. With `demo`, CloudMapper's demo AWS estate (content/demo) is loaded
 * and audited, so screens show real findings.
 */
export async function startConsoleApp(options: TestAppOptions & { demo?: boolean } = {}): Promise<ConsoleApp> {
  // The console files of this run's build (global-setup.ts), read when the console routes register.
  process.env.CONTROLGRAPH_CONSOLE_DIR = inject('consoleDir');
  const t = await createTestApp(options);
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const tenant = await buildTenant(t, { plan: 'enterprise' });
  if (options.demo) await loadDemo(t, tenant);
  void t.worker.start();
  return {
    t,
    base,
    tenant,
    password: PASSWORD,
    close: () => t.close(),
  };
}

async function loadDemo(t: TestApp, tenant: TenantFixture): Promise<void> {
  const estate = await readDemoEstate();
  const token = tenant.admin.token;
  for (const [field, items] of [
    ['nodes', estate.nodes],
    ['edges', estate.edges],
  ] as const) {
    for (let i = 0; i < items.length; i += MAX_BATCH) {
      // 201 when the batch created anything, 200 when it only updated.
      const res = await call(t.app, token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/${field}`, payload: { [field]: items.slice(i, i + MAX_BATCH) } });
      if (res.statusCode !== 200 && res.statusCode !== 201) throw new Error(`loading the demo ${field}: ${res.statusCode} ${res.body}`);
    }
  }
  await audit(t, token, tenant.id);
}
