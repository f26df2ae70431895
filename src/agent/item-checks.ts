import { Ajv, type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { TSchema } from 'typebox';
import {
  COLLECTIONS,
  ReportConfigCheck,
  ReportConnection,
  ReportFile,
  ReportFirewallPolicy,
  ReportFirewallRule,
  ReportInterface,
  ReportListeningPort,
  ReportLocalUser,
  ReportPackage,
  ReportProcess,
  ReportService,
  ReportSudoAccess,
  ReportWindowsFirewallRule,
  type CollectionName,
} from './report-schema.js';

/**
 * The checks of report items against the report schema, with Ajv like the server (the schemas use
 * OpenAPI's `nullable`, which Ajv knows) but without the server's type coercion: what passes here
 * passes there.
 *
 * Compiling the 13 schemas costs more CPU than the rest of a cycle, so the built agent does not: the
 * build (scripts/build-agent.mjs) compiles them once with `itemAjv({ code: { source: true } })` into
 * standalone code, and puts that in place of this module's `itemChecks`. A checkout compiles here.
 */

export const ITEM_SCHEMAS: Record<CollectionName, TSchema> = {
  packages: ReportPackage,
  processes: ReportProcess,
  system_services: ReportService,
  listening_ports: ReportListeningPort,
  connections: ReportConnection,
  network_interfaces: ReportInterface,
  firewall_rules: ReportFirewallRule,
  firewall_policies: ReportFirewallPolicy,
  windows_firewall_rules: ReportWindowsFirewallRule,
  local_users: ReportLocalUser,
  sudo_access: ReportSudoAccess,
  file_integrity: ReportFile,
  config_checks: ReportConfigCheck,
};

/** An Ajv holding each collection's item schema under the collection's name. */
export function itemAjv(options: Options = {}): Ajv {
  const ajv = new Ajv({ allErrors: false, strict: false, ...options });
  (addFormats as unknown as (a: Ajv) => Ajv)(ajv);
  for (const name of COLLECTIONS) ajv.addSchema(ITEM_SCHEMAS[name] as object, name);
  return ajv;
}

export function itemChecks(): Map<CollectionName, ValidateFunction> {
  const ajv = itemAjv();
  return new Map(COLLECTIONS.map((name) => [name, ajv.getSchema(name)!]));
}
