import { Type } from 'typebox';
import { PageNumber, Paged } from '../../../platform/http/schemas.js';
import { toPage, offsetOf, type Page, type PageRequest } from '../../../platform/http/pagination.js';
import { frameworks } from '../frameworks.js';
import { FrameworkName } from '../schemas.js';
import type { FrameworkId } from '../rules/rule-types.js';

/**
 * A framework's whole control catalog (content/frameworks/), searchable: what a questionnaire's
 * control picker offers. /controls/status lists only the controls a rule or a published
 * questionnaire already covers, so a first mapping to an uncovered control could not be picked.
 * The catalog is the same for every tenant; the route sits under the tenant like the other
 * controls routes so that it is authenticated and permission-checked the same way.
 */
export const ControlCatalogQuery = Type.Object({
  framework: FrameworkName,
  search: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'case-insensitive, in the control id or title' })),
  include_withdrawn: Type.Optional(Type.Boolean({ default: false, description: 'withdrawn controls too (left out by default: nothing should be mapped to them)' })),
  page: PageNumber,
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
});

export const CatalogControl = Type.Object({
  framework: FrameworkName,
  control_id: Type.String(),
  title: Type.String(),
  family: Type.String(),
  parent: Type.Union([Type.String(), Type.Null()], { description: 'the base control of an enhancement' }),
  withdrawn: Type.Boolean(),
});
export const ControlCatalogPage = Paged(CatalogControl, {
  framework_name: Type.String(),
  framework_version: Type.String(),
});

export interface CatalogControlView {
  framework: FrameworkId;
  control_id: string;
  title: string;
  family: string;
  parent: string | null;
  withdrawn: boolean;
}

export function controlCatalog(
  framework: FrameworkId,
  filter: { search?: string; include_withdrawn?: boolean },
  page: PageRequest,
): Page<CatalogControlView> & { framework_name: string; framework_version: string } {
  const catalog = frameworks().get(framework)!;
  const needle = filter.search?.toLowerCase();
  const matching = [...catalog.controls.values()].filter(
    (control) => (filter.include_withdrawn || !control.withdrawn) && (!needle || control.id.toLowerCase().includes(needle) || control.title.toLowerCase().includes(needle)),
  );
  const items = matching.slice(offsetOf(page), offsetOf(page) + page.perPage).map((control) => ({
    framework,
    control_id: control.id,
    title: control.title,
    family: control.family,
    parent: control.parent ?? null,
    withdrawn: control.withdrawn === true,
  }));
  return { ...toPage(items, matching.length, page), framework_name: catalog.name, framework_version: catalog.version };
}
