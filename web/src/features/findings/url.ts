import { useUrlState } from '../../ui/url-state';
import { FRAMEWORK_IDS } from '../../api/frameworks';

export const VIEWS = ['list', 'scored', 'grouped'] as const;
export type View = (typeof VIEWS)[number];
export const STATUSES = ['open', 'accepted', 'resolved', 'all'] as const;
export const FRAMEWORKS = FRAMEWORK_IDS;
export const PER_PAGE = [50, 100, 200, 500];

/** The findings screen's state, all of it in the URL: view, filters, sort and page. */
export function findingsUrlOf(params: URLSearchParams) {
  const get = (name: string, fallback = ''): string => params.get(name) ?? fallback;
  const getNumber = (name: string, fallback: number): number => {
    const value = Number(params.get(name));
    return Number.isFinite(value) && value > 0 ? value : fallback;
  };
  const view = (VIEWS as readonly string[]).includes(get('view')) ? (get('view') as View) : 'list';
  const status = (STATUSES as readonly string[]).includes(get('status')) ? (get('status') as (typeof STATUSES)[number]) : 'open';
  const framework: (typeof FRAMEWORKS)[number] | '' = (FRAMEWORKS as readonly string[]).includes(get('framework')) ? (get('framework') as (typeof FRAMEWORKS)[number]) : '';
  const perPage = getNumber('per_page', 50);
  return {
    view,
    status,
    framework,
    // Lower case in the URL (readable links); the API takes upper case.
    severities: get('severity')
      .split(',')
      .map((value) => value.trim().toLowerCase())
      .filter(Boolean),
    resourceType: get('resource_type'),
    // Who found it: controlgraph, or an imported tool (prowler, securityhub, a SARIF tool's name).
    source: get('source'),
    controlId: get('control_id'),
    search: get('search'),
    groupId: get('group_id'),
    sort: get('sort', '-severity'),
    page: getNumber('page', 1),
    perPage: PER_PAGE.includes(perPage) ? perPage : 50,
  };
}

export function useFindingsUrl() {
  const state = useUrlState();
  return { ...state, url: findingsUrlOf(state.params) };
}

export type FindingsUrl = ReturnType<typeof findingsUrlOf>;

/** The filters the three views share, as the API's query parameters. */
export function apiFilters(url: FindingsUrl) {
  const framework = url.framework || undefined;
  return {
    status: url.status,
    ...(framework ? { framework } : {}),
    ...(url.severities.length ? { severity: url.severities.map((value) => value.toUpperCase()).join(',') } : {}),
    ...(url.resourceType ? { resource_type: url.resourceType } : {}),
    ...(url.source ? { source: url.source } : {}),
    ...(url.controlId ? { control_id: url.controlId } : {}),
    ...(url.search ? { search: url.search } : {}),
    ...(url.groupId ? { group_id: url.groupId } : {}),
    page: url.page,
    per_page: url.perPage,
  };
}
