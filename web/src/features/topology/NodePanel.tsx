import { useMemo, useState } from 'react';
import { Anchor, Button, CloseButton, Group, List, Paper, Select, Stack, Table, Text, Title } from '@mantine/core';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { formatNumber } from '../../i18n';
import { SeverityBadge } from '../../ui/SeverityBadge';
import { QueryError } from '../../ui/QueryState';
import type { Group as GraphGroup, Model } from './graph-model';
import { useBlastRadius, useTrace } from './queries';
import { NodeFindings } from './NodeFindings';

export interface Highlight {
  nodes: string[];
  edges: [string, string][];
}

const INTERNET = 'internet';

/** The selected resource (or group): its details, its findings, a path trace and its blast radius. */
export function NodePanel({
  model,
  selected,
  open,
  onToggle,
  onClose,
  onHighlight,
  groupTitle,
}: {
  model: Model;
  selected: string;
  open: boolean;
  onToggle: (key: string) => void;
  onClose: () => void;
  onHighlight: (highlight: Highlight) => void;
  groupTitle: (g: GraphGroup) => string;
}) {
  const { t } = useTranslation('topology');
  const group = model.groups.get(selected);
  const nodeId = group ? group.nodeId : selected;
  const node = nodeId ? model.nodes.get(nodeId) : undefined;
  const findings = nodeId ? model.findings.get(nodeId) : undefined;

  return (
    <Paper withBorder p="md" component="section" aria-labelledby="topology-panel-title">
      <Stack gap="sm">
        <Group justify="space-between" wrap="nowrap" align="flex-start">
          <Title order={2} size="h4" id="topology-panel-title" style={{ wordBreak: 'break-all' }}>
            {node ? node.name || node.native_id : group ? groupTitle(group) : selected}
          </Title>
          <CloseButton aria-label={t('panel.close')} onClick={onClose} />
        </Group>
        {group && (
          <Group gap="sm">
            <Text size="sm">{t('panel.groupResources', { count: group.size, formatted: formatNumber(group.size) })}</Text>
            {group.severity && <SeverityBadge severity={group.severity.toLowerCase()} />}
            <Button size="xs" variant="default" onClick={() => onToggle(group.key)}>
              {open ? t('panel.collapse') : t('panel.expand')}
            </Button>
          </Group>
        )}
        {node && (
          <>
            <Table withRowBorders={false} verticalSpacing={2} fz="sm">
              <caption className="visually-hidden">{t('panel.title')}</caption>
              <Table.Tbody>
                {(
                  [
                    ['id', node.id],
                    ['type', node.type],
                    ['region', node.region || '—'],
                    ['account', node.account_id ?? '—'],
                    ['nativeId', node.native_id],
                  ] as const
                ).map(([key, value]) => (
                  <Table.Tr key={key}>
                    <Table.Th scope="row" w={100}>
                      {t(`panel.${key}`)}
                    </Table.Th>
                    <Table.Td style={{ wordBreak: 'break-all' }}>{value}</Table.Td>
                  </Table.Tr>
                ))}
                <Table.Tr>
                  <Table.Th scope="row">{t('panel.findings')}</Table.Th>
                  <Table.Td>
                    <NodeFindings findings={findings} />
                  </Table.Td>
                </Table.Tr>
              </Table.Tbody>
            </Table>
            <Anchor component={Link} to={`/findings?resource_id=${encodeURIComponent(node.id)}`} size="sm">
              {t('panel.findingsLink')}
            </Anchor>
            <TraceForm model={model} source={node.id} onHighlight={onHighlight} />
            <BlastRadius source={node.id} onHighlight={onHighlight} />
          </>
        )}
      </Stack>
    </Paper>
  );
}

function TraceForm({ model, source, onHighlight }: { model: Model; source: string; onHighlight: (h: Highlight) => void }) {
  const { t } = useTranslation('topology');
  const trace = useTrace();
  const [target, setTarget] = useState<string | null>(null);
  const options = useMemo(
    () => [
      { value: INTERNET, label: t('trace.internet') },
      ...[...model.nodes.values()].filter((n) => n.id !== source).map((n) => ({ value: n.id, label: `${n.name || n.native_id} · ${n.type}` })),
    ],
    [model, source, t],
  );
  const name = (id: string) => (id === INTERNET ? t('trace.internet') : (model.nodes.get(id)?.name ?? id));
  const run = () => {
    if (!target) return;
    trace.mutate(
      { source, target },
      {
        onSuccess: (result) => {
          const nodes = new Set<string>();
          const edges: [string, string][] = [];
          for (const path of result.paths) {
            for (const id of path.node_ids) nodes.add(id);
            for (const hop of path.hops) edges.push([hop.from, hop.to]);
          }
          onHighlight({ nodes: [...nodes], edges });
        },
      },
    );
  };
  const result = trace.data;
  return (
    <Stack gap="xs" component="section" aria-labelledby="trace-heading">
      <Title order={3} size="h5" id="trace-heading">
        {t('trace.heading')}
      </Title>
      <Group gap="xs" align="flex-end" wrap="nowrap">
        <Select
          label={t('trace.target')}
          data={options}
          value={target}
          onChange={setTarget}
          searchable
          limit={50}
          style={{ flex: 1 }}
          size="xs"
          nothingFoundMessage={t('noMatch')}
        />
        <Button size="xs" onClick={run} disabled={!target} loading={trace.isPending}>
          {t('trace.run')}
        </Button>
      </Group>
      {trace.isError && <QueryError error={trace.error} />}
      {result && (
        <div role="status" aria-live="polite">
          {result.paths.length === 0 ? (
            <Text size="sm">{t('trace.none', { depth: result.max_depth })}</Text>
          ) : (
            <Stack gap={4}>
              <Text size="sm" fw={600}>
                {t('trace.found', { count: result.paths.length, length: result.shortest_length })}
              </Text>
              <List size="sm" type="ordered">
                {result.paths.map((path, index) => (
                  <List.Item key={path.node_ids.join('>')}>
                    {t('trace.path', { n: index + 1, length: path.length })}: {path.node_ids.map(name).join(' → ')}
                  </List.Item>
                ))}
              </List>
            </Stack>
          )}
          {result.truncated && (
            <Text size="xs" c="dimmed">
              {t('trace.truncated')}
            </Text>
          )}
        </div>
      )}
    </Stack>
  );
}

function BlastRadius({ source, onHighlight }: { source: string; onHighlight: (h: Highlight) => void }) {
  const { t } = useTranslation('topology');
  const blast = useBlastRadius();
  const run = () =>
    blast.mutate(source, {
      onSuccess: (result) => onHighlight({ nodes: [source, ...result.nodes.map((n) => n.id)], edges: result.nodes.map((n) => [n.via.from, n.id] as [string, string]) }),
    });
  const result = blast.data;
  const shown = result?.nodes.slice(0, 30) ?? [];
  return (
    <Stack gap="xs" component="section" aria-labelledby="blast-heading">
      <Title order={3} size="h5" id="blast-heading">
        {t('blast.heading')}
      </Title>
      <Button size="xs" variant="default" onClick={run} loading={blast.isPending} style={{ alignSelf: 'flex-start' }}>
        {t('blast.run')}
      </Button>
      {blast.isError && (
        <Text size="sm" c="red">
          {errorMessage(blast.error)}
        </Text>
      )}
      {result && (
        <div role="status" aria-live="polite">
          <Text size="sm" fw={600}>
            {t('blast.summary', { count: result.nodes_listed, depth: result.depth_reached, health: result.health })}
          </Text>
          <List size="sm">
            {shown.map((n) => (
              <List.Item key={n.id}>
                {n.name || n.id} · {n.type} · {t('blast.depth', { depth: n.depth })}
              </List.Item>
            ))}
          </List>
          {result.nodes.length > shown.length && (
            <Text size="xs" c="dimmed">
              {t('blast.more', { count: result.nodes.length - shown.length })}
            </Text>
          )}
        </div>
      )}
    </Stack>
  );
}
