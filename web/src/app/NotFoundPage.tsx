import { Anchor, Stack, Text, Title } from '@mantine/core';
import { Link, useLocation } from 'react-router';
import { useTranslation } from 'react-i18next';

export function NotFoundPage() {
  const { t } = useTranslation();
  const location = useLocation();
  return (
    <Stack>
      <Title order={1} size="h2">
        {t('notFound.title')}
      </Title>
      <Text>{t('notFound.body', { path: location.pathname })}</Text>
      <Anchor component={Link} to="/">
        {t('notFound.home')}
      </Anchor>
    </Stack>
  );
}
