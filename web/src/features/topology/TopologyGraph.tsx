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
    selector: ':parent',
    style: {
      'text-valign': 'top',
      'text-halign': 'center',
      'text-margin-y': 40,
      'background-opacity': 0.06,
      'background-color': '#228be6',
      'border-color': '#74c0fc',
      padding: '16px',
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

const LAYOUT = {
  name: 'elk',
  nodeDimensionsIncludeLabels: true,
  // A group's title sits above its box: room for it inside the padding, so it does not cover a neighbour.
  nodeLayoutOptions: (node: cytoscape.NodeSingular) => (node.isParent() ? { 'elk.padding': '[top=44,left=16,bottom=16,right=16]' } : {}),
  fit: true,
  padding: 20,
  // The service's diagrams use the layered algorithm, left to right, with orthogonal routing.
  elk: {
    algorithm: 'layered',
    'elk.direction': 'RIGHT',
    'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
    'elk.spacing.nodeNode': 24,
    'elk.layered.spacing.nodeNodeBetweenLayers': 48,
    'elk.aspectRatio': 1.6,
  },
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
      instance.edges().filter((e) => pairs.has(`${e.data('source') as string}\n${e.data('target') as string}`) || pairs.has(`${e.data('target') as string}\n${e.data('source') as string}`)).addClass('hit');
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
