import { useState } from 'react';
import { Button, Group, Select, Stack, TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useTranslation } from 'react-i18next';
import { CATALOG_FRAMEWORKS, useFrameworkControls, type CatalogFramework } from './queries';

/**
 * Picks a control of a framework catalog and hands it on as "<framework>:<control_id>", the form
 * control_mappings are stored in. What is typed is searched in the whole catalog by the service (id or
 * title); the frameworks without a catalog in the service (hipaa, gdpr, cmmc-l2, …) are typed in
 * below, and the service checks them when the question is saved.
 */
export function ControlPicker({ onPick, taken }: { onPick: (mapping: string) => void; taken: string[] }) {
  const { t } = useTranslation('questionnaires');
  const [framework, setFramework] = useState<CatalogFramework | null>(null);
  const [control, setControl] = useState<string | null>(null);
  const [typed, setTyped] = useState('');
  const [search, setSearch] = useState('');
  const [picked, setPicked] = useState<{ value: string; label: string } | null>(null);
  // Once a control is chosen the box shows its label; that is not a new search.
  const [debounced] = useDebouncedValue(picked && search === picked.label ? '' : search.trim(), 250);
  const controls = useFrameworkControls(framework, debounced);
  const found = (controls.data?.items ?? [])
    .filter((c) => !taken.includes(`${c.framework}:${c.control_id}`))
    .map((c) => ({ value: c.control_id, label: `${c.control_id} — ${c.title}` }));
  // The chosen control stays an option while the list shows another search's results.
  const options = picked && !found.some((o) => o.value === picked.value) ? [picked, ...found] : found;
  const more = (controls.data?.total ?? 0) > (controls.data?.items.length ?? 0);

  const addTyped = () => {
    if (typed.trim() && !taken.includes(typed.trim())) onPick(typed.trim());
    setTyped('');
  };

  return (
    <Stack gap="xs">
      <Group align="flex-end" wrap="wrap" gap="xs">
        <Select
          label={t('picker.framework')}
          data={CATALOG_FRAMEWORKS.map((f) => ({ value: f, label: f }))}
          value={framework}
          onChange={(value) => {
            setFramework(value as CatalogFramework | null);
            setControl(null);
            setPicked(null);
            setSearch('');
          }}
          w={180}
        />
        <Select
          label={t('picker.control')}
          placeholder={framework ? undefined : t('picker.chooseFramework')}
          data={options}
          value={control}
          onChange={(value, option) => {
            setControl(value);
            setPicked(value && option ? { value, label: option.label } : null);
          }}
          searchable
          searchValue={search}
          onSearchChange={setSearch}
          // The service searched the whole catalog already; the box only shows its answer.
          filter={({ options: shown }) => shown}
          description={more ? t('picker.more', { shown: controls.data?.items.length, total: controls.data?.total }) : undefined}
          disabled={!framework}
          nothingFoundMessage={controls.isFetching ? t('picker.searching') : t('picker.none')}
          error={controls.isError ? t('picker.failed') : undefined}
          w={360}
          comboboxProps={{ withinPortal: true }}
        />
        <Button
          variant="light"
          disabled={!framework || !control}
          onClick={() => {
            onPick(`${framework}:${control}`);
            setControl(null);
            setPicked(null);
            setSearch('');
          }}
        >
          {t('picker.add')}
        </Button>
      </Group>
      <Group align="flex-end" wrap="wrap" gap="xs">
        <TextInput
          label={t('picker.typed')}
          description={t('picker.typedHelp')}
          placeholder="hipaa:164.308(a)(5)"
          value={typed}
          onChange={(e) => setTyped(e.currentTarget.value)}
          onKeyDown={(e) => {
            // Enter adds the mapping instead of submitting the question.
            if (e.key === 'Enter') {
              e.preventDefault();
              addTyped();
            }
          }}
          w={360}
        />
        <Button variant="light" disabled={!typed.trim()} onClick={addTyped}>
          {t('picker.addTyped')}
        </Button>
      </Group>
    </Stack>
  );
}
