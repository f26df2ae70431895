export type Catalogs = Record<string, Record<string, unknown>>;
type Modules = Record<string, { default: Record<string, unknown> }>;

/** Namespaces by name: `features/<name>/messages(.xx).ts` is `<name>`, `i18n/common(.xx).ts` is `common`. */
export function collectCatalogs(features: Modules, common: Modules): Catalogs {
  const catalogs: Catalogs = {};
  for (const [path, module] of Object.entries(features)) {
    const name = /features\/([^/]+)\/messages(?:\.[a-z]{2})?\.ts$/.exec(path)?.[1];
    if (name) catalogs[name] = module.default;
  }
  for (const module of Object.values(common)) catalogs.common = module.default;
  return catalogs;
}
