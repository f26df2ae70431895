export interface PageRequest {
  page: number;
  perPage: number;
}

export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  per_page: number;
  total_pages: number;
}

export function pageRequest(query: { page?: number; per_page?: number }, defaultPerPage = 50): PageRequest {
  return { page: query.page ?? 1, perPage: query.per_page ?? defaultPerPage };
}

export function offsetOf(request: PageRequest): number {
  return (request.page - 1) * request.perPage;
}

export function toPage<T>(items: T[], total: number, request: PageRequest): Page<T> {
  return {
    items,
    total,
    page: request.page,
    per_page: request.perPage,
    total_pages: Math.ceil(total / request.perPage),
  };
}
