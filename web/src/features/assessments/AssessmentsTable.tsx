import { useMemo } from 'react';
import { Anchor, Text } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import { formatDate, formatDay } from '../../i18n';
import { DataTable } from '../../ui/DataTable';
import { StatusBadge } from './StatusBadge';
import type { AssessmentSummary } from './queries';

/**
 * Assessments as a table, each title a link to `linkTo(id)`: the respondent's list shows who
 * reviews, the review queue who answered and when it was submitted.
 */
export function AssessmentsTable({
  items,
  linkTo,
  person,
  caption,
}: {
  items: AssessmentSummary[];
  linkTo: (id: string) => string;
  person: 'reviewer' | 'assignee';
  caption: string;
}) {
  const { t } = useTranslation('assessments');
  const columns = useMemo<ColumnDef<AssessmentSummary>[]>(
    () => [
      {
        id: 'title',
        header: t('columns.title'),
        cell: ({ row }) => (
          <Anchor component={Link} to={linkTo(row.original.id)} size="sm">
            {row.original.questionnaire_title}
          </Anchor>
        ),
      },
      { id: 'status', header: t('columns.status'), cell: ({ row }) => <StatusBadge status={row.original.status} /> },
      {
        id: 'progress',
        header: t('columns.progress'),
        cell: ({ row }) => <Text size="sm">{t('progressShort', { answered: row.original.progress.answered, total: row.original.progress.total })}</Text>,
      },
      { id: 'person', header: t(`columns.${person}`), cell: ({ row }) => <Text size="sm">{row.original[person] ?? '—'}</Text> },
      person === 'assignee'
        ? { id: 'submitted', header: t('columns.submitted'), cell: ({ row }) => <Text size="sm">{formatDate(row.original.submitted_at)}</Text> }
        : {
            id: 'due',
            header: t('columns.due'),
            cell: ({ row }) => (
              <Text size="sm" c={row.original.overdue ? 'red.9' : undefined}>
                {formatDay(row.original.due_date)}
              </Text>
            ),
          },
    ],
    [t, linkTo, person],
  );
  return <DataTable data={items} columns={columns} getRowId={(row) => row.id} caption={caption} />;
}
