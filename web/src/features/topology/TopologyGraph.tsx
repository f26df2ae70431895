import { useEffect, useRef } from 'react';
import cytoscape, { type Core, type ElementDefinition } from 'cytoscape';
import elk from 'cytoscape-elk';
import { Box } from '@mantine/core';
import type { VisibleElement } from './graph-model';

cytoscape.use(elk);

/** Badge colours by worst open severity (the same hues as SeverityBadge); the label names it too. */
const SEVERITY_FILL: Record<string, string> = {
  critical: '#c92a2a',
  high: '#e8590c',
  medium: '#f08c00',
  low: '#1971c2',
  info: '#868e96',
};

/** Space between an open group's box and what it holds, and between its title and its box. */
const GROUP_PADDING = 16;
const TITLE_GAP = 6;

const STYLE: cytoscape.StylesheetJson = [
  {
    selector: 'node',
    style: {
      label: 'data(label)',
      'font-size': 11,
      'text-wrap': 'wrap',
      'text-max-width': '140px',
      'text-valign': 'bottom',
      'text-margin-y': 4,
      color: '#212529',
      width: 28,
      height: 28,
      'background-color': '#ced4da',
      'border-width': 1,
      'border-color': '#495057',
    },
  },
  {
    // An open group: its title sits above its box, outside it, so it never covers what is inside;
    // the layout leaves room for it (groupLayoutOptions). The box grows around its children's
    // titles too (compound-sizing-wrt-labels), so a subnet's title stays inside its VPC.
    selector: ':parent',
    style: {
      'text-valign': 'top',
      'text-halign': 'center',
      'text-margin-y': -TITLE_GAP,
      'text-max-width': '480px',
      'text-background-color': '#ffffff',
      'text-background-opacity': 0.85,
      'text-background-padding': '2px',
      'background-opacity': 0.06,
      'background-color': '#228be6',
      'border-color': '#74c0fc',
      padding: `${GROUP_PADDING}px`,
      'compound-sizing-wrt-labels': 'include',
      'font-weight': 'bold',
    },
  },
  { selector: 'node.account', style: { 'border-color': '#495057', 'border-width': 2 } },
  { selector: 'node.vpc', style: { 'border-color': '#2f9e44', 'border-style': 'dashed' } },
  { selector: 'node.subnet', style: { 'border-color': '#1c7ed6', 'border-style': 'dotted' } },
  { selector: 'node.closed', style: { shape: 'round-rectangle', width: 56, height: 40, 'background-color': '#e7f5ff', 'border-width': 2 } },
  ...Object.entries(SEVERITY_FILL).map(([severity, color]) => ({
    selector: `node.sev-${severity}`,
    style: { 'background-color': color, 'border-color': '#212529', 'border-width': 3 },
  })),
  {
    selector: 'edge',
    style: { width: 1, 'line-color': '#adb5bd', 'target-arrow-color': '#adb5bd', 'target-arrow-shape': 'triangle', 'curve-style': 'bezier', 'arrow-scale': 0.7 },
  },
  { selector: '.match', style: { 'overlay-color': '#fab005', 'overlay-opacity': 0.35, 'overlay-padding': 6 } },
  { selector: 'node.hit', style: { 'border-color': '#7048e8', 'border-width': 5 } },
  { selector: 'edge.hit', style: { width: 4, 'line-color': '#7048e8', 'target-arrow-color': '#7048e8', 'z-index': 10 } },
  { selector: 'node:selected', style: { 'overlay-color': '#228be6', 'overlay-opacity': 0.3, 'overlay-padding': 8 } },
];

/**
 * How ELK lays out the content of the canvas and of each open group. Like the service's diagrams
 * (src/modules/exports/render/layout.ts): layered, left to right, each group on its own
 * (SEPARATE_CHILDREN), with the unconnected parts packed to an aspect ratio, so the forty instances
 * of a subnet without relations between them form a block instead of one column thousands of pixels
 * tall. The canvas draws relations as straight lines between nodes, so ELK's routing is not used.
 */
const LEVEL = {
  'elk.algorithm': 'layered',
  'elk.direction': 'RIGHT',
  'elk.spacing.nodeNode': '24',
  'elk.layered.spacing.nodeNodeBetweenLayers': '48',
  'elk.separateConnectedComponents': 'true',
  'elk.spacing.componentComponent': '24',
  'elk.aspectRatio': '1.6',
};

/**
 * ELK's room for an open group. ELK sizes a group from its content and this padding, while the
 * canvas draws the box around the children with GROUP_PADDING: the extra top padding is where the
 * title goes (its measured height and gap), and the minimum width keeps a title wider than the
 * children clear of the neighbours. The bottom is larger than the sides because the ELK adapter
 * centres each resource with its label on its slot, so a label reaches a little below it.
 */
function groupLayoutOptions(node: cytoscape.NodeSingular): Record<string, string> {
  const title = node.boundingBox({ includeNodes: false, includeEdges: false, includeLabels: true, includeOverlays: false });
  const top = GROUP_PADDING + Math.ceil(title.h) + TITLE_GAP + 2;
  return {
    ...LEVEL,
    'elk.padding': `[top=${top},left=${GROUP_PADDING},bottom=${GROUP_PADDING + 16},right=${GROUP_PADDING}]`,
    'elk.nodeSize.constraints': 'MINIMUM_SIZE',
    'elk.nodeSize.minimum': `(${Math.ceil(title.w) + 2 * GROUP_PADDING}, 0)`,
    'elk.contentAlignment': 'H_CENTER V_TOP',
  };
}

const LAYOUT = {
  name: 'elk',
  nodeDimensionsIncludeLabels: true,
  nodeLayoutOptions: (node: cytoscape.NodeSingular) => (node.isParent() ? groupLayoutOptions(node) : {}),
  fit: true,
  padding: 20,
  // `algorithm` by the adapter's own key, which it otherwise sends unset.
  elk: { ...LEVEL, algorithm: 'layered', 'elk.hierarchyHandling': 'SEPARATE_CHILDREN' },
} as cytoscape.LayoutOptions;

/**
 * The graph on a canvas. Drawn from `elements` (laid out again when they change); `highlight`
 * marks the result of a search, trace or blast radius; a tap reports the element tapped.
 */
export function TopologyGraph({
  elements,
  matches,
  hits,
  focus,
  selected,
  onSelect,
  label,
  fitSignal,
}: {
  elements: VisibleElement[];
  matches: string[];
  hits: { nodes: string[]; edges: [string, string][] };
  focus: string | null;
  selected: string | null;
  onSelect: (id: string) => void;
  label: string;
  fitSignal: number;
}) {
  const container = useRef<HTMLDivElement>(null);
  const cy = useRef<Core | null>(null);
  const select = useRef(onSelect);
  select.current = onSelect;
  const focusRef = useRef(focus);
  focusRef.current = focus;

  useEffect(() => {
    const instance = cytoscape({ container: container.current, style: STYLE, wheelSensitivity: 0.3, minZoom: 0.05, maxZoom: 3 });
    instance.on('tap', 'node', (event) => select.current(event.target.id() as string));
    cy.current = instance;
    return () => {
      instance.destroy();
      cy.current = null;
    };
  }, []);

  useEffect(() => {
    const instance = cy.current;
    if (!instance) return;
    instance.batch(() => {
      instance.elements().remove();
      instance.add(elements as ElementDefinition[]);
    });
    const layout = instance.layout(LAYOUT);
    // The layout is asynchronous: centre the focused node once it has its place.
    layout.one('layoutstop', () => {
      const target = focusRef.current ? instance.getElementById(focusRef.current) : null;
      if (target?.nonempty()) instance.center(target);
    });
    layout.run();
  }, [elements]);

  useEffect(() => {
    const instance = cy.current;
    if (!instance) return;
    instance.batch(() => {
      instance.elements().removeClass('match hit');
      for (const id of matches) instance.getElementById(id).addClass('match');
      for (const id of hits.nodes) instance.getElementById(id).addClass('hit');
      const pairs = new Set(hits.edges.map(([s, t]) => `${s}\n${t}`));
      instance
        .edges()
        .filter((e) => pairs.has(`${e.data('source') as string}\n${e.data('target') as string}`) || pairs.has(`${e.data('target') as string}\n${e.data('source') as string}`))
        .addClass('hit');
    });
  }, [matches, hits, elements]);

  useEffect(() => {
    const instance = cy.current;
    if (!instance) return;
    instance.nodes(':selected').unselect();
    if (selected) instance.getElementById(selected).select();
  }, [selected, elements]);

  useEffect(() => {
    const instance = cy.current;
    if (!instance || !focus) return;
    const target = instance.getElementById(focus);
    if (target.nonempty()) instance.animate({ center: { eles: target }, zoom: Math.max(instance.zoom(), 1) }, { duration: 300 });
  }, [focus, elements]);

  useEffect(() => {
    if (fitSignal > 0) cy.current?.fit(undefined, 20);
  }, [fitSignal]);

  return <Box ref={container} role="img" aria-label={label} h={560} style={{ border: '1px solid var(--mantine-color-gray-4)', borderRadius: 4, background: 'white' }} />;
}
