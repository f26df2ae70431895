import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectPath } from '../../../platform/paths.js';

/**
 * The AWS property model shipped in `content/aws-config-schema/`: for each AWS Config resource type,
 * the flattened property paths of its configuration item (`configuration.ipPermissions.fromPort`,
 * lists unmarked) and their leaf types. A path "exists" for a type when it is a leaf of the schema or
 * an object/list on the way to one (`configuration.ipPermissions`), because conditions test whole
 * blocks with `has()` and range over lists.
 *
 * `additions.json` beside the copied schema adds the paths ControlGraph's nodes carry and the schema
 * lacks (IAM policy documents AWS Config records, IAM's credential report the aws plugin adds), and
 * the types AWS Config has none for, which only the aws plugin writes (the account's IAM password
 * policy): see content/aws-config-schema/SOURCES.md, "Additions".
 */
export interface PropertyModel {
  /**
   * Every resource type of the model, e.g. `AWS::S3::Bucket`, sorted: the AWS Config types of the
   * schema and the types only `additions.json` defines (settings the aws plugin reads that AWS Config
   * does not record, such as `AWS::IAM::AccountPasswordPolicy`).
   */
  resourceTypes(): string[];
  hasResourceType(configType: string): boolean;
  /** The type is one AWS Config records (a file of the copied schema), not one only additions.json defines. */
  recordedByConfig(configType: string): boolean;
  hasPath(configType: string, path: string): boolean;
  /** The leaf type (`string`, `boolean`, `integer`, …), `object` for an inner path, undefined if absent. */
  typeOf(configType: string, path: string): string | undefined;
  /** The leaf paths of a type with their types; empty for an unknown type. */
  paths(configType: string): ReadonlyMap<string, string>;
}

const SUFFIX = '.properties.json';
/** Paths ControlGraph's nodes carry beyond the copied schema, per type (see SOURCES.md, "Additions"). */
const ADDITIONS = 'additions.json';

export const defaultSchemaDir = (): string => projectPath('content', 'aws-config-schema');

/**
 * Reads the list of types eagerly (one directory listing) and each type's file on first use: rules
 * touch a few dozen of the 413 types, so loading all of them would be wasted start-up time.
 */
export function loadPropertyModel(dir: string = defaultSchemaDir()): PropertyModel {
  const typesDir = join(dir, 'resource-types');
  if (!existsSync(typesDir)) throw new Error(`AWS Config schema not found: ${typesDir}`);
  const types = readdirSync(typesDir)
    .filter((f) => f.endsWith(SUFFIX))
    .map((f) => f.slice(0, -SUFFIX.length))
    .sort();
  const recorded = new Set(types);
  const additionsFile = join(dir, ADDITIONS);
  const additions = existsSync(additionsFile) ? (JSON.parse(readFileSync(additionsFile, 'utf8')) as Record<string, Record<string, string>>) : {};
  // Types of additions.json alone: what the aws plugin reads and AWS Config has no type for.
  for (const configType of Object.keys(additions)) if (!recorded.has(configType)) types.push(configType);
  types.sort();
  const known = new Set(types);
  const cache = new Map<string, { leaves: Map<string, string>; inner: Set<string> }>();

  function load(configType: string) {
    let entry = cache.get(configType);
    if (entry) return entry;
    const leaves = new Map<string, string>();
    const inner = new Set<string>();
    if (known.has(configType)) {
      const raw = recorded.has(configType) ? (JSON.parse(readFileSync(join(typesDir, configType + SUFFIX), 'utf8')) as Record<string, string>) : {};
      for (const [path, type] of Object.entries({ ...raw, ...(Object.hasOwn(additions, configType) ? additions[configType] : {}) })) {
        leaves.set(path, type);
        const parts = path.split('.');
        for (let i = 1; i < parts.length; i++) inner.add(parts.slice(0, i).join('.'));
      }
    }
    entry = { leaves, inner };
    cache.set(configType, entry);
    return entry;
  }

  return {
    resourceTypes: () => [...types],
    hasResourceType: (configType) => known.has(configType),
    recordedByConfig: (configType) => recorded.has(configType),
    hasPath: (configType, path) => {
      const { leaves, inner } = load(configType);
      return leaves.has(path) || inner.has(path);
    },
    typeOf: (configType, path) => {
      const { leaves, inner } = load(configType);
      return leaves.get(path) ?? (inner.has(path) ? 'object' : undefined);
    },
    paths: (configType) => load(configType).leaves,
  };
}

let shared: PropertyModel | undefined;

/** The shipped schema, loaded once per process. */
export function propertyModel(): PropertyModel {
  shared ??= loadPropertyModel();
  return shared;
}
