import { Group, Pagination, Select, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { formatNumber } from '../i18n';

const PAGE_SIZES = ['50', '100', '200', '500'];

/** Page number and size (50 to 500) of a paged list; both live in the URL through the caller. */
export function Pager({ page, perPage, total, onChange }: { page: number; perPage: number; total: number; onChange: (next: { page?: number; perPage?: number }) => void }) {
  const { t } = useTranslation();
  const pages = Math.max(1, Math.ceil(total / perPage));
  return (
    <Group justify="space-between" mt="sm" wrap="wrap">
      <Text size="sm" c="dimmed">
        {t('total', { count: total, formatted: formatNumber(total) })}
      </Text>
      <Group gap="sm">
        <Select
          aria-label={t('perPage')}
          size="xs"
          w={90}
          data={PAGE_SIZES}
          value={String(perPage)}
          onChange={(value) => value && onChange({ perPage: Number(value), page: 1 })}
          allowDeselect={false}
        />
        <Pagination
          size="sm"
          total={pages}
          value={Math.min(page, pages)}
          onChange={(next) => onChange({ page: next })}
          getControlProps={(control) => ({ 'aria-label': control })}
        />
      </Group>
    </Group>
  );
}
