import type { ReactNode } from 'react';
import type { UseQueryResult } from '@tanstack/react-query';
import type { ColumnDef } from '@tanstack/react-table';
import { DataTable } from '../../ui/DataTable';
import { Pager } from '../../ui/Pager';
import { QueryView } from '../../ui/QueryState';
import { useUrlPaging } from '../../ui/url-paging';

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
  const { page, perPage, setPaging } = useUrlPaging();
  return (
    <QueryView query={query} isEmpty={(data) => data.items.length === 0} empty={empty}>
      {(data) => (
        <>
          <DataTable data={data.items as Row[]} columns={columns} getRowId={getRowId} caption={caption} />
          <Pager page={page} perPage={perPage} total={data.total} onChange={setPaging} />
          {after?.(data)}
        </>
      )}
    </QueryView>
  );
}
