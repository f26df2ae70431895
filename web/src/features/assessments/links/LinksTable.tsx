import { Badge, Button, Group, Pagination, Table } from '@mantine/core';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../../api/errors';
import { formatDate } from '../../../i18n';
import { notifyError, notifySuccess } from '../../../ui/notify';
import { QueryView } from '../../../ui/QueryState';
import { useRespondentLinks, useRevokeLink, type RespondentLink } from './queries';

const STATUS_COLOR: Record<RespondentLink['status'], string> = { active: 'teal', expired: 'gray', revoked: 'red' };

/** An assessment's links: for whom, how sent, until when, how often used; an active one can be revoked. */
export function LinksTable({ assessmentId }: { assessmentId: string }) {
  const { t } = useTranslation('assessments');
  const [page, setPage] = useState(1);
  const links = useRespondentLinks(assessmentId, page);
  const revoke = useRevokeLink(assessmentId);
  return (
    <QueryView query={links} isEmpty={(data) => data.total === 0} empty={t('links.empty')}>
      {(data) => (
        <>
          <Table striped>
            <caption className="visually-hidden">{t('links.caption')}</caption>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('links.columns.name')}</Table.Th>
                <Table.Th>{t('links.columns.delivery')}</Table.Th>
                <Table.Th>{t('links.columns.status')}</Table.Th>
                <Table.Th>{t('links.columns.expires')}</Table.Th>
                <Table.Th>{t('links.columns.used')}</Table.Th>
                <Table.Th>
                  <span className="visually-hidden">{t('links.columns.actions')}</span>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {data.items.map((link) => (
                <Table.Tr key={link.id}>
                  <Table.Td>{link.name}</Table.Td>
                  <Table.Td>{link.delivery === 'email' ? t('links.byEmail', { email: link.recipient_email }) : t('links.byCopy')}</Table.Td>
                  <Table.Td>
                    <Badge variant="light" color={STATUS_COLOR[link.status]} c="dark">
                      {t(`links.status.${link.status}`)}
                    </Badge>
                  </Table.Td>
                  <Table.Td>
                    <time dateTime={link.expires_at}>{formatDate(link.expires_at)}</time>
                  </Table.Td>
                  <Table.Td>{link.last_used_at ? t('links.usedTimes', { count: link.use_count, last: formatDate(link.last_used_at) }) : t('links.unused')}</Table.Td>
                  <Table.Td>
                    {link.status === 'active' && (
                      <Button
                        size="xs"
                        variant="light"
                        color="red"
                        c="red.9"
                        loading={revoke.isPending && revoke.variables === link.id}
                        aria-label={t('links.revokeNamed', { name: link.name })}
                        onClick={() =>
                          revoke.mutate(link.id, {
                            onSuccess: () => notifySuccess(t('links.revoked', { name: link.name })),
                            onError: (error) => notifyError(errorMessage(error)),
                          })
                        }
                      >
                        {t('links.revoke')}
                      </Button>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          {data.total_pages > 1 && (
            <Group justify="flex-end" mt="xs">
              <Pagination size="sm" total={data.total_pages} value={page} onChange={setPage} />
            </Group>
          )}
        </>
      )}
    </QueryView>
  );
}
