import { badRequest } from '../../platform/http/errors.js';
import { EXPORTS_PER_PAGE } from './schemas.js';

export interface ExportListRequest {
  limit?: number;
  offset?: number;
  page?: number;
  per_page?: number;
}

export interface ExportListWindow {
  /** null: every export from offset on. */
  limit: number | null;
  offset: number;
  /** Set when the client paged with page/per_page. */
  page: number | null;
  perPage: number | null;
}

/**
 * GET /exports pages with `limit`/`offset` (no default limit) or, like every other list, with
 * `page`/`per_page` (page 1 and 50 a page by default), which stand for limit = per_page and
 * offset = (page - 1) * per_page. Both at once would be two answers to one question: 400.
 */
export function exportListWindow(query: ExportListRequest): ExportListWindow {
  const numbered = query.page !== undefined || query.per_page !== undefined;
  if (!numbered) return { limit: query.limit ?? null, offset: query.offset ?? 0, page: null, perPage: null };
  const mixed = ['limit', 'offset'].filter((name) => query[name as 'limit' | 'offset'] !== undefined);
  if (mixed.length > 0) {
    throw badRequest(`page/per_page cannot be combined with ${mixed.join(' or ')}: use either limit/offset or page/per_page`, {
      conflicting: [...mixed, ...['page', 'per_page'].filter((name) => query[name as 'page' | 'per_page'] !== undefined)],
    });
  }
  const page = query.page ?? 1;
  const perPage = query.per_page ?? EXPORTS_PER_PAGE;
  return { limit: perPage, offset: (page - 1) * perPage, page, perPage };
}
