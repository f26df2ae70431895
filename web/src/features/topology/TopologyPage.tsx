import { useCallback, useDeferredValue, useMemo, useState } from 'react';
import { Alert, Button, Grid, Group, Stack, Table, Text, TextInput, Title, UnstyledButton } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { formatNumber } from '../../i18n';
import { PageHeader } from '../../ui/PageHeader';
import { EmptyState, QueryView } from '../../ui/QueryState';
import { useUrlState } from '../../ui/url-state';
import { ExportButtons } from './ExportButtons';
import { ancestors, buildModel, initialExpanded, visibleElements, type Group as GraphGroup } from './graph-model';
import { NodePanel, type Highlight } from './NodePanel';
import { useTopology, type TopologyData } from './queries';
import { TopologyGraph } from './TopologyGraph';
import { NodeFindings } from './NodeFindings';

/** Above this many resources the graph opens collapsed to accounts, regions and VPCs. */
const COLLAPSE_ABOVE = 300;
/** Rows of the list view at once; the search narrows it. */
const LIST_ROWS = 50;

export function TopologyPage() {
  const { t } = useTranslation('topology');
  const topology = useTopology();
  return (
    <>
      <PageHeader title={t('title')} actions={<ExportButtons />} />
      <QueryView query={topology} isEmpty={(data) => data.nodes.length === 0} empty={<EmptyState>{t('empty')}</EmptyState>}>
        {(data) => <TopologyView data={data} />}
      </QueryView>
    </>
  );
}

function TopologyView({ data }: { data: TopologyData }) {
  const { t } = useTranslation('topology');
  const { t: common } = useTranslation();
  const { get, set } = useUrlState();
  const model = useMemo(() => buildModel(data.nodes, data.edges, data.findings), [data]);
  const large = data.nodes.length > COLLAPSE_ABOVE;
  const [open, setOpen] = useState(() => initialExpanded(model, large));
  const [highlight, setHighlight] = useState<Highlight>({ nodes: [], edges: [] });
  const [fitSignal, setFitSignal] = useState(0);
  const search = get('q');
  const deferredSearch = useDeferredValue(search);
  const selected = get('node') || null;

  const groupTitle = useCallback((g: GraphGroup) => t(`kinds.${g.kind}`, { name: g.name }), [t]);
  const severityText = useCallback((severity: string) => common(`severity.${severity.toLowerCase()}`), [common]);
  const { elements, shownAs } = useMemo(
    () =>
      visibleElements(model, data.edges, open, {
        group: (g, closed) => {
          const title = closed ? t('containerLabel', { label: groupTitle(g), count: formatNumber(g.size) }) : groupTitle(g);
          return g.severity && (closed || g.nodeId) ? `${title}\n${severityText(g.severity)} · ${formatNumber(g.findings)}` : title;
        },
        resource: (n, f) => (f ? `${n.name || n.native_id}\n${severityText(f.severity)} · ${formatNumber(f.count)}` : n.name || n.native_id),
      }),
    [model, data.edges, open, t, groupTitle, severityText],
  );

  const matches = useMemo(() => {
    const q = deferredSearch.trim().toLowerCase();
    const all = [...model.nodes.values()];
    if (!q) return all;
    return all.filter((n) => n.name.toLowerCase().includes(q) || n.id.toLowerCase().includes(q) || n.native_id.toLowerCase().includes(q));
  }, [model, deferredSearch]);
  const searching = deferredSearch.trim() !== '';
  const matchShown = useMemo(() => (searching ? [...new Set(matches.map((n) => shownAs.get(n.id)).filter((id): id is string => Boolean(id)))] : []), [matches, shownAs, searching]);

  /** Opens the groups holding a resource, so it is drawn itself. */
  const reveal = useCallback(
    (id: string) => {
      const chain = ancestors(model, id);
      if (chain.every((key) => open.has(key))) return;
      setOpen((current) => new Set([...current, ...chain]));
    },
    [model, open],
  );

  const selectNode = (id: string | null) => {
    if (id && !model.groups.has(id)) reveal(id);
    set({ node: id, q: search });
  };
  const onCanvasSelect = (id: string) => {
    const group = model.groups.get(id);
    // A tap on a closed group opens it; the panel shows the group (or the VPC or subnet it stands for).
    if (group && !open.has(id)) setOpen((current) => new Set([...current, id]));
    set({ node: id, q: search });
  };
  const toggle = (key: string) =>
    setOpen((current) => {
      const next = new Set(current);
      if (next.has(key)) next.delete(key);
      else next.add(key);
      return next;
    });
  const onSearch = (value: string) => {
    set({ q: value, node: selected });
    const q = value.trim().toLowerCase();
    const first = q ? [...model.nodes.values()].find((n) => n.name.toLowerCase().includes(q) || n.id.toLowerCase().includes(q)) : undefined;
    if (first) reveal(first.id);
  };

  const mappedHighlight = useMemo(
    () => ({
      nodes: highlight.nodes.map((id) => shownAs.get(id) ?? id),
      edges: highlight.edges.map(([s, t2]) => [shownAs.get(s) ?? s, shownAs.get(t2) ?? t2] as [string, string]),
    }),
    [highlight, shownAs],
  );
  const focus = selected ? (shownAs.get(selected) ?? selected) : (matchShown[0] ?? null);

  return (
    <Stack gap="sm">
      <Text size="sm" data-testid="topology-counts">
        {t('counts', { nodes: formatNumber(data.nodesTotal), edges: formatNumber(data.edgesTotal) })}
      </Text>
      {data.nodes.length < data.nodesTotal && <Alert color="yellow">{t('capped', { shown: formatNumber(data.nodes.length), total: formatNumber(data.nodesTotal) })}</Alert>}
      {data.edges.length < data.edgesTotal && <Alert color="yellow">{t('edgesCapped', { shown: formatNumber(data.edges.length), total: formatNumber(data.edgesTotal) })}</Alert>}
      {data.findingsShown < data.findingsTotal && (
        <Alert color="yellow">{t('findingsCapped', { shown: formatNumber(data.findingsShown), total: formatNumber(data.findingsTotal) })}</Alert>
      )}
      {large && (
        <Text size="sm" c="dimmed">
          {t('collapsed')}
        </Text>
      )}
      <Group gap="sm" align="flex-end" wrap="wrap">
        <TextInput label={t('search')} placeholder={t('searchPlaceholder')} value={search} onChange={(e) => onSearch(e.currentTarget.value)} w={320} />
        <Text size="sm" role="status" aria-live="polite" pb={6}>
          {searching ? (matches.length ? t('matches', { count: matches.length }) : t('noMatch')) : ''}
        </Text>
        <Button variant="default" size="sm" onClick={() => setOpen(new Set(model.groups.keys()))}>
          {t('expandAll')}
        </Button>
        <Button variant="default" size="sm" onClick={() => setOpen(initialExpanded(model, true))}>
          {t('collapseAll')}
        </Button>
        <Button variant="default" size="sm" onClick={() => setFitSignal((n) => n + 1)}>
          {t('fit')}
        </Button>
        {highlight.nodes.length > 0 && (
          <Button variant="subtle" size="sm" onClick={() => setHighlight({ nodes: [], edges: [] })}>
            {t('clearHighlight')}
          </Button>
        )}
      </Group>
      <Grid>
        <Grid.Col span={{ base: 12, lg: selected ? 8 : 12 }}>
          <TopologyGraph
            elements={elements}
            matches={matchShown}
            hits={mappedHighlight}
            focus={focus}
            selected={selected ? (shownAs.get(selected) ?? selected) : null}
            onSelect={onCanvasSelect}
            label={t('graphLabel', { nodes: formatNumber(data.nodes.length), edges: formatNumber(data.edges.length) })}
            fitSignal={fitSignal}
          />
        </Grid.Col>
        {selected && (
          <Grid.Col span={{ base: 12, lg: 4 }}>
            <NodePanel
              model={model}
              selected={selected}
              open={open.has(selected)}
              onToggle={toggle}
              onClose={() => selectNode(null)}
              onHighlight={setHighlight}
              groupTitle={groupTitle}
            />
          </Grid.Col>
        )}
      </Grid>
      <NodeList data={data} rows={matches} onSelect={selectNode} />
    </Stack>
  );
}

/** The text alternative of the canvas: the resources (those matching the search), each selectable by keyboard. */
function NodeList({ data, rows, onSelect }: { data: TopologyData; rows: TopologyData['nodes']; onSelect: (id: string) => void }) {
  const { t } = useTranslation('topology');
  const shown = rows.slice(0, LIST_ROWS);
  return (
    <Stack gap="xs" component="section" aria-labelledby="topology-list-title">
      <Title order={2} size="h4" id="topology-list-title">
        {t('listView')}
      </Title>
      <Table.ScrollContainer minWidth={640} type="native">
        <Table verticalSpacing={4} fz="sm">
          <caption className="visually-hidden">{t('listCaption')}</caption>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{t('columns.name')}</Table.Th>
              <Table.Th>{t('columns.type')}</Table.Th>
              <Table.Th>{t('columns.region')}</Table.Th>
              <Table.Th>{t('columns.account')}</Table.Th>
              <Table.Th>{t('columns.findings')}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {shown.map((n) => {
              const f = data.findings.get(n.id);
              return (
                <Table.Tr key={n.id}>
                  <Table.Td>
                    <UnstyledButton onClick={() => onSelect(n.id)} aria-label={t('select', { name: n.name || n.native_id })} c="blue" fz="sm" td="underline">
                      {n.name || n.native_id}
                    </UnstyledButton>
                  </Table.Td>
                  <Table.Td>{n.type}</Table.Td>
                  <Table.Td>{n.region}</Table.Td>
                  <Table.Td>{n.account_id ?? '—'}</Table.Td>
                  <Table.Td>
                    <NodeFindings findings={f} />
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      {rows.length > shown.length && (
        <Text size="xs" c="dimmed">
          {t('listMore', { shown: formatNumber(shown.length), total: formatNumber(rows.length) })}
        </Text>
      )}
    </Stack>
  );
}
