import { useState, type FormEvent } from 'react';
import { Alert, Button, Group, MultiSelect, Select, Stack, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { ApiError, errorMessage } from '../../api/errors';
import { notifySuccess } from '../../ui/notify';
import { QueryError } from '../../ui/QueryState';
import { REVIEWER_ROLES, useAssign, useTenantUsers, type Questionnaire } from './queries';
import { assignFieldOf, type AssignField } from './refusals';

/** Assigns a published questionnaire: one assessment per assignee, with a reviewer and a due date. */
export function AssignForm({ questionnaire }: { questionnaire: Questionnaire }) {
  const { t } = useTranslation('questionnaires');
  const users = useTenantUsers();
  const assign = useAssign(questionnaire.id);
  const [assignees, setAssignees] = useState<string[]>([]);
  const [reviewer, setReviewer] = useState<string | null>(null);
  const [due, setDue] = useState(questionnaire.due_date ?? '');
  const [errors, setErrors] = useState<Partial<Record<AssignField, string>>>({});
  const [formError, setFormError] = useState<string | null>(null);

  const people = (users.data?.items ?? []).map((u) => ({ value: u.id, label: u.username, role: u.role }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (assignees.length === 0) return setErrors({ assignees: t('assign.assigneesRequired') });
    setErrors({});
    setFormError(null);
    assign.mutate(
      { assignees, reviewer_id: reviewer, due_date: due || null },
      {
        onSuccess: (result) => {
          notifySuccess(t('assign.done', { count: result.items.length }));
          setAssignees([]);
        },
        onError: (error) => {
          const message = errorMessage(error);
          const field = error instanceof ApiError && error.status < 500 ? assignFieldOf(message) : null;
          if (field) setErrors({ [field]: message });
          else setFormError(message);
        },
      },
    );
  };

  return (
    <section aria-labelledby="assign-title">
      <Title order={2} size="h3" id="assign-title" mb="sm">
        {t('assign.title')}
      </Title>
      {users.isError && <QueryError error={users.error} onRetry={() => void users.refetch()} />}
      <form onSubmit={submit} noValidate>
        <Stack gap="sm" maw={720}>
          {formError && (
            <Alert color="red" title={t('assign.failed')} role="alert">
              {formError}
            </Alert>
          )}
          <MultiSelect
            label={t('assign.assignees')}
            data={people.filter((p) => p.value !== reviewer)}
            value={assignees}
            onChange={setAssignees}
            searchable
            disabled={users.isPending}
            error={errors.assignees}
            required
            comboboxProps={{ withinPortal: true }}
          />
          <Group grow align="flex-start">
            <Select
              label={t('assign.reviewer')}
              description={t('assign.reviewerHelp')}
              data={people.filter((p) => REVIEWER_ROLES.includes(p.role) && !assignees.includes(p.value))}
              value={reviewer}
              onChange={setReviewer}
              searchable
              clearable
              disabled={users.isPending}
              error={errors.reviewer_id}
              comboboxProps={{ withinPortal: true }}
            />
            <TextInput label={t('assign.dueDate')} type="date" value={due} onChange={(e) => setDue(e.currentTarget.value)} error={errors.due_date} />
          </Group>
          <Button type="submit" loading={assign.isPending} w="fit-content">
            {t('assign.submit')}
          </Button>
        </Stack>
      </form>
    </section>
  );
}
