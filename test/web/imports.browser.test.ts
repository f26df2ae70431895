import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../src/platform/paths.js';
import { chromiumPath } from './harness/chromium.js';
import { useConsole } from './harness/use-console.js';
import { expectAccessible, signIn } from './harness/pages.js';

const web = useConsole();

/**
 * Prowler 5's own AWS sample (test/fixtures/imports/SOURCES.md) with its second record broken: the
 * import reads the other four (two failed checks become findings) and lists the broken one.
 */
function brokenProwlerFile(): Buffer {
  const records = JSON.parse(readFileSync(projectPath('test', 'fixtures', 'imports', 'prowler5-example_output_aws.ocsf.json'), 'utf8')) as unknown[];
  records[1] = 'not a finding';
  return Buffer.from(JSON.stringify(records));
}

describe.runIf(chromiumPath())('Administration > Scanner imports', () => {
  it('an analyst uploads a Prowler file, follows the import to its end, reads the broken record and opens its findings', { timeout: 180_000 }, async () => {
    const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['security-analyst'].username);
    await page.goto('/admin');
    await page.getByRole('tab', { name: 'Scanner imports' }).click();
    await page.waitForURL(/\/admin\/imports$/);
    await page.getByText('No imports yet.').waitFor();
    await expectAccessible(page);

    // Nothing chosen: the form says so at the field, and sends nothing.
    await page.getByRole('button', { name: 'Upload and import' }).click();
    await page.getByText('Choose the file to import.').waitFor();

    // A truncated file is refused whole, with the service's words naming where it breaks off.
    await page.locator('input[type=file]').setInputFiles({ name: 'prowler-truncated.ocsf.json', mimeType: 'application/json', buffer: brokenProwlerFile().subarray(0, 5000) });
    await page.getByRole('button', { name: 'Upload and import' }).click();
    const refusal = page.getByRole('alert').filter({ hasText: 'The file was not imported' });
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/byte 5000/);
    await expectAccessible(page);
    await page.screenshot({ path: '/tmp/console-imports-refused.png', fullPage: true });

    await page.locator('input[type=file]').setInputFiles({ name: 'prowler-broken.ocsf.json', mimeType: 'application/json', buffer: brokenProwlerFile() });
    await page.getByRole('button', { name: 'Upload and import' }).click();

    // The import's detail opens (in the URL) and follows the job to its end.
    const detail = page.getByRole('region', { name: 'Import of prowler-broken.ocsf.json' });
    await detail.waitFor();
    expect(page.url()).toMatch(/[?&]import=[0-9a-f-]{36}/);
    await detail.getByText('Succeeded', { exact: true }).waitFor({ timeout: 60_000 });
    const field = (label: string) => detail.locator(`dt:text-is("${label}") + dd`);
    expect(await field('Records').textContent()).toBe('5');
    expect(await field('New findings').textContent()).toBe('2');
    expect(await field('Errors').textContent()).toBe('1');
    expect(await field('Source').textContent()).toBe('prowler');
    expect(await field('Format').textContent()).toBe('Prowler JSON-OCSF');

    // The broken record, by its position in the file, and why.
    const errors = detail.getByRole('table', { name: 'Records of prowler-broken.ocsf.json that could not be read' });
    await errors.waitFor();
    expect(await errors.getByRole('row').count()).toBe(2);
    const errorRow = errors.getByRole('row').nth(1);
    expect(await errorRow.getByRole('cell').first().textContent()).toBe('1');
    expect(await errorRow.getByRole('cell').nth(1).textContent()).toMatch(/string/);

    // The list shows it finished, with its counts and who uploaded it.
    const row = page.getByRole('table', { name: 'Scanner imports of the workspace, newest first' }).getByRole('row', { name: /prowler-broken\.ocsf\.json/ });
    await expect.poll(() => row.getByText('Succeeded').isVisible()).toBe(true);
    expect(await row.textContent()).toContain('2 new, 0 resolved');
    expect(await row.textContent()).toContain(web.app.tenant.users['security-analyst'].username);
    await expectAccessible(page);
    await page.screenshot({ path: '/tmp/console-imports.png', fullPage: true });

    // The filters are in the URL; a filter nothing matches says so.
    await page.goto('/admin/imports?status=failed');
    await page.getByText('No import matches these filters.').waitFor();
    await page.goto('/admin/imports?status=succeeded&format=prowler-ocsf');
    await row.waitFor();

    // Its findings: the findings screen filtered by the source.
    await row.getByRole('button', { name: 'Show the import of prowler-broken.ocsf.json' }).click();
    await detail.getByRole('link', { name: 'Findings from prowler' }).click();
    await page.waitForURL(/\/findings\?/);
    expect(new URL(page.url()).searchParams.get('source')).toBe('prowler');
    expect(await page.getByRole('textbox', { name: 'Source', exact: true }).inputValue()).toBe('prowler');
    // The sample's two failed checks, nothing of ours (the tenant has no graph of its own).
    await expect.poll(() => page.getByRole('table', { name: 'Findings, one row each' }).getByRole('row').count(), { timeout: 20_000 }).toBe(3);
    await expectAccessible(page);
    await context.close();
  });

  it('a read-only user sees the imports but no upload form', { timeout: 180_000 }, async () => {
    const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['read-only'].username);
    await page.goto('/admin/imports');
    await page.getByRole('heading', { name: 'Scanner imports', level: 2 }).waitFor();
    // The first test's import, or the empty list: either way the list has loaded.
    await page.getByRole('table', { name: 'Scanner imports of the workspace, newest first' }).or(page.getByText('No imports yet.')).waitFor();
    expect(await page.getByRole('button', { name: 'Upload and import' }).count()).toBe(0);
    expect(await page.locator('input[type=file]').count()).toBe(0);
    await expectAccessible(page);
    await page.screenshot({ path: '/tmp/console-imports-read-only.png', fullPage: true });
    await context.close();
  });
});
