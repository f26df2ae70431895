import { useEffect, useState } from 'react';
import { Group, MultiSelect, Select, TextInput } from '@mantine/core';
import { useDebouncedCallback } from '@mantine/hooks';
import { useTranslation } from 'react-i18next';
import { SEVERITIES } from '../../../ui/SeverityBadge';
import { FRAMEWORKS, STATUSES, type FindingsUrl } from '../url';

/** Every filter of GET /findings; each change goes to the URL (and back to page 1). */
export function FindingFilters({ url, onChange }: { url: FindingsUrl; onChange: (changes: Record<string, string | null>) => void }) {
  const { t } = useTranslation('findings');
  return (
    <Group gap="sm" align="flex-end" wrap="wrap" mb="md" role="search" aria-label={t('filters.label')}>
      <DebouncedInput label={t('filters.search')} value={url.search} onCommit={(search) => onChange({ search })} w={220} />
      <MultiSelect
        label={t('filters.severity')}
        data={SEVERITIES.map((value) => ({ value, label: t(`common:severity.${value}`) }))}
        value={url.severities}
        onChange={(values) => onChange({ severity: values.join(',') })}
        clearable
        w={240}
      />
      <Select
        label={t('filters.status')}
        data={STATUSES.map((value) => ({ value, label: t(`status.${value}`) }))}
        value={url.status}
        onChange={(status) => onChange({ status: status === 'open' ? null : status })}
        allowDeselect={false}
        w={140}
      />
      <Select
        label={t('filters.framework')}
        data={FRAMEWORKS.map((value) => ({ value, label: t(`frameworks.${value}`) }))}
        value={url.framework || null}
        onChange={(framework) => onChange({ framework })}
        clearable
        placeholder={t('filters.any')}
        w={170}
      />
      <DebouncedInput label={t('filters.resourceType')} value={url.resourceType} onCommit={(value) => onChange({ resource_type: value })} w={180} />
      <DebouncedInput label={t('filters.source')} value={url.source} onCommit={(value) => onChange({ source: value })} w={140} />
      <DebouncedInput label={t('filters.control')} value={url.controlId} onCommit={(value) => onChange({ control_id: value })} w={140} />
    </Group>
  );
}

/** A text filter that writes to the URL once typing pauses, and follows the URL when it changes. */
function DebouncedInput({ label, value, onCommit, w }: { label: string; value: string; onCommit: (value: string) => void; w: number }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  const commit = useDebouncedCallback((next: string) => onCommit(next.trim()), 400);
  return (
    <TextInput
      label={label}
      value={text}
      w={w}
      onChange={(event) => {
        setText(event.currentTarget.value);
        commit(event.currentTarget.value);
      }}
      onKeyDown={(event) => {
        if (event.key === 'Enter') onCommit(text.trim());
      }}
    />
  );
}
