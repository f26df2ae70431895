import { readFileSync } from 'node:fs';
import { badRequest, type AppError } from '../../platform/http/errors.js';
import { projectPath } from '../../platform/paths.js';
import { FRAMEWORKS, type FrameworkId } from './rules/rule-types.js';

export interface Control {
  id: string;
  title: string;
  family: string;
  parent?: string;
  withdrawn?: boolean;
  /** The Prowler check ids the requirement lists (catalogs carried as Prowler ships them). */
  checks?: string[];
  /** Prowler's own requirement id, where ours differs (`164_308_a_1_ii_a` for `164.308(a)(1)(ii)(A)`). */
  prowler_id?: string;
}

export interface Framework {
  id: FrameworkId;
  name: string;
  version: string;
  controls: Map<string, Control>;
  /** On for a tenant that has not switched it (no compliance_settings row). */
  defaultEnabled: boolean;
  /**
   * The key Prowler's outputs name the framework by (`HIPAA`, `ISO27001-2022`), for catalogs carried as
   * Prowler ships them; such a catalog holds only the requirements Prowler lists, not the whole standard.
   */
  prowlerKey: string | null;
}

/**
 * The control catalogs under content/frameworks/ (see its README for sources), loaded and checked
 * once; a malformed catalog stops the start naming the file.
 */
function loadFramework(id: FrameworkId): Framework {
  const file = projectPath('content', 'frameworks', `${id}.json`);
  const raw = JSON.parse(readFileSync(file, 'utf8')) as {
    id: string;
    name: string;
    version: string;
    default_enabled?: boolean;
    prowler?: { compliance_key: string };
    controls: Control[];
  };
  if (raw.id !== id || !Array.isArray(raw.controls) || raw.controls.length === 0) {
    throw new Error(`${file}: not a framework catalog for "${id}"`);
  }
  const controls = new Map<string, Control>();
  for (const control of raw.controls) {
    if (!control.id || !control.title) throw new Error(`${file}: control without id or title`);
    if (controls.has(control.id)) throw new Error(`${file}: duplicate control ${control.id}`);
    controls.set(control.id, control);
  }
  return { id, name: raw.name, version: raw.version, controls, defaultEnabled: raw.default_enabled !== false, prowlerKey: raw.prowler?.compliance_key ?? null };
}

let catalogs: Map<FrameworkId, Framework> | null = null;

export function frameworks(): Map<FrameworkId, Framework> {
  catalogs ??= new Map(FRAMEWORKS.map((id) => [id, loadFramework(id)]));
  return catalogs;
}

export function isFrameworkId(value: string): value is FrameworkId {
  return (FRAMEWORKS as readonly string[]).includes(value);
}

/**
 * The 400 for a framework id the service does not know: it names the valid ids, in the message and
 * in details.allowed_values (as a schema enum violation does), so a client can correct itself.
 */
export function unknownFramework(value: string, valid: readonly string[] = FRAMEWORKS, where = ''): AppError {
  return badRequest(`${where ? `${where}: ` : ''}unknown framework "${value}" (one of ${valid.join(', ')})`, { allowed_values: [...valid] });
}

/** The framework id, or the 400 naming the valid ones. */
export function requireFrameworkId(value: string, where = ''): FrameworkId {
  if (!isFrameworkId(value)) throw unknownFramework(value, FRAMEWORKS, where);
  return value;
}

export function controlTitle(framework: string, controlId: string): string | null {
  return isFrameworkId(framework) ? (frameworks().get(framework)?.controls.get(controlId)?.title ?? null) : null;
}
