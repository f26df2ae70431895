import { Button, Table, Title } from '@mantine/core';
import { useNavigate } from 'react-router';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { notifyError, notifySuccess } from '../../ui/notify';
import { QueryView } from '../../ui/QueryState';
import { useCreateFromTemplate, useTemplates } from './queries';

/** The templates with their frameworks and question counts; "Use" copies one into a new draft. */
export function TemplatesTable({ writable }: { writable: boolean }) {
  const { t } = useTranslation('questionnaires');
  const templates = useTemplates();
  const create = useCreateFromTemplate();
  const navigate = useNavigate();

  const use = (id: string) =>
    create.mutate(id, {
      onSuccess: (created) => {
        notifySuccess(t('templates.created', { title: created.title }));
        void navigate(`/questionnaires/${created.id}`);
      },
      onError: (error) => notifyError(errorMessage(error)),
    });

  return (
    <section aria-labelledby="questionnaire-templates">
      <Title order={2} size="h3" id="questionnaire-templates" mb="sm">
        {t('templates.title')}
      </Title>
      <QueryView query={templates} isEmpty={(data) => data.items.length === 0} empty={t('templates.empty')}>
        {(data) => (
          <Table striped>
            <caption className="visually-hidden">{t('templates.caption')}</caption>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('templates.columns.title')}</Table.Th>
                <Table.Th>{t('templates.columns.frameworks')}</Table.Th>
                <Table.Th>{t('templates.columns.questions')}</Table.Th>
                {writable && <Table.Th>{t('templates.columns.action')}</Table.Th>}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {data.items.map((template) => (
                <Table.Tr key={template.id}>
                  <Table.Td>{template.title}</Table.Td>
                  <Table.Td>{template.frameworks.join(', ')}</Table.Td>
                  <Table.Td>{template.question_count}</Table.Td>
                  {writable && (
                    <Table.Td>
                      <Button
                        size="xs"
                        variant="light"
                        onClick={() => use(template.id)}
                        loading={create.isPending && create.variables === template.id}
                        aria-label={t('templates.useNamed', { title: template.title })}
                      >
                        {t('templates.use')}
                      </Button>
                    </Table.Td>
                  )}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </QueryView>
    </section>
  );
}
