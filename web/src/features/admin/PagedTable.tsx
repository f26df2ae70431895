import type { ReactNode } from 'react';
import type { UseQueryResult } from '@tanstack/react-query';
import type { ColumnDef } from '@tanstack/react-table';
import { DataTable } from '../../ui/DataTable';
import { Pager } from '../../ui/Pager';
import { QueryView } from '../../ui/QueryState';
import { useUrlState } from '../../ui/url-state';

/** The page and page size of an administration list, in the URL like every other list. */
export function usePageParams() {
  const url = useUrlState();
  return { page: url.getNumber('page', 1), perPage: url.getNumber('per_page', 50) };
}

/**
 * An administration list: loading, empty and error states, the table and its pager. `after`
 * renders below the pager with the loaded page (e.g. a selected row's details).
 */
export function PagedTable<Row, Data extends { items: unknown[]; total: number }>({
  query,
  columns,
  getRowId,
  caption,
  empty,
  after,
}: {
  query: UseQueryResult<Data>;
  columns: ColumnDef<Row>[];
  getRowId: (row: Row) => string;
  caption: string;
  empty?: ReactNode;
  after?: (data: Data) => ReactNode;
}) {
  const url = useUrlState();
  const { page, perPage } = usePageParams();
  return (
    <QueryView query={query} isEmpty={(data) => data.items.length === 0} empty={empty}>
      {(data) => (
        <>
          <DataTable data={data.items as Row[]} columns={columns} getRowId={getRowId} caption={caption} />
          <Pager page={page} perPage={perPage} total={data.total} onChange={(next) => url.set({ page: next.page, per_page: next.perPage })} />
          {after?.(data)}
        </>
      )}
    </QueryView>
  );
}
