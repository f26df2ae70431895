import { Checkbox, Table, UnstyledButton } from '@mantine/core';
import { flexRender, getCoreRowModel, useReactTable, type ColumnDef, type RowSelectionState, type SortingState, type Updater } from '@tanstack/react-table';
import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import rowClasses from './table-rows.module.css';

/** Stands for the row's id in the translated checkbox label (never part of a real text). */
const ROW_ID_SLOT = '\u0000';

/**
 * A server-driven table: rows come sorted and paged from the API, so sorting only reports the wanted
 * order (the caller keeps it in the URL). Optional row selection for bulk actions.
 */
export function DataTable<T>({
  data,
  columns,
  getRowId,
  sort,
  onSortChange,
  selection,
  onSelectionChange,
  caption,
}: {
  data: T[];
  columns: ColumnDef<T, any>[];
  getRowId: (row: T) => string;
  /** `field` or `-field` (descending), the API's sort syntax. */
  sort?: string;
  onSortChange?: (sort: string) => void;
  selection?: Record<string, boolean>;
  onSelectionChange?: (selection: Record<string, boolean>) => void;
  caption: string;
}) {
  const { t } = useTranslation();
  const sorting: SortingState = sort ? [{ id: sort.replace(/^-/, ''), desc: sort.startsWith('-') }] : [];
  const selectable = Boolean(onSelectionChange);
  // The rows' checkbox label, looked up once per table (not once per row) and filled in per row.
  const selectRowLabel = useMemo(() => {
    const [before = '', after = ''] = t('table.selectRow', { id: ROW_ID_SLOT }).split(ROW_ID_SLOT);
    return (id: string) => `${before}${id}${after}`;
  }, [t]);
  const table = useReactTable({
    data,
    columns,
    getRowId,
    getCoreRowModel: getCoreRowModel(),
    manualSorting: true,
    enableSortingRemoval: false,
    enableRowSelection: selectable,
    state: { sorting, rowSelection: selection ?? {} },
    onSortingChange: (updater: Updater<SortingState>) => {
      const next = typeof updater === 'function' ? updater(sorting) : updater;
      const first = next[0];
      if (first && onSortChange) onSortChange(`${first.desc ? '-' : ''}${first.id}`);
    },
    onRowSelectionChange: (updater: Updater<RowSelectionState>) => {
      const next = typeof updater === 'function' ? updater(selection ?? {}) : updater;
      onSelectionChange?.(next);
    },
  });

  return (
    <Table.ScrollContainer minWidth={640} type="native">
      <Table striped highlightOnHover verticalSpacing="xs">
        <caption className="visually-hidden">{caption}</caption>
        <Table.Thead>
          {table.getHeaderGroups().map((group) => (
            <Table.Tr key={group.id}>
              {selectable && (
                <Table.Th w={36}>
                  <Checkbox
                    aria-label={t('table.selectAll')}
                    checked={table.getIsAllRowsSelected()}
                    indeterminate={table.getIsSomeRowsSelected()}
                    onChange={table.getToggleAllRowsSelectedHandler()}
                  />
                </Table.Th>
              )}
              {group.headers.map((header) => {
                const sortable = header.column.getCanSort() && Boolean(onSortChange) && header.column.columnDef.enableSorting !== false;
                const direction = header.column.getIsSorted();
                const label = flexRender(header.column.columnDef.header, header.getContext());
                return (
                  <Table.Th key={header.id} aria-sort={direction ? (direction === 'desc' ? 'descending' : 'ascending') : undefined}>
                    {sortable ? (
                      <UnstyledButton onClick={header.column.getToggleSortingHandler()} fw={700} fz="sm">
                        {label} {direction === 'desc' ? '▼' : direction === 'asc' ? '▲' : ''}
                      </UnstyledButton>
                    ) : (
                      label
                    )}
                  </Table.Th>
                );
              })}
            </Table.Tr>
          ))}
        </Table.Thead>
        {/* Body rows as plain elements styled like Mantine's (table-rows.module.css): a page of 500 rows
            was otherwise thousands of components. The header keeps Mantine's. */}
        <tbody>
          {table.getRowModel().rows.map((row) => (
            <tr key={row.id} className={rowClasses.row} data-selected={row.getIsSelected() || undefined}>
              {selectable && (
                <td className={rowClasses.cell}>
                  <input
                    type="checkbox"
                    className={rowClasses.checkbox}
                    aria-label={selectRowLabel(row.id)}
                    checked={row.getIsSelected()}
                    onChange={row.getToggleSelectedHandler()}
                  />
                </td>
              )}
              {row.getVisibleCells().map((cell) => (
                <td key={cell.id} className={rowClasses.cell}>
                  {flexRender(cell.column.columnDef.cell, cell.getContext())}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
