import { Resvg } from '@resvg/resvg-js';
import { drawioChunks } from './drawio.js';
import { layoutGraph, type Diagram } from './layout.js';
import type { RenderGraph } from './model.js';
import { buildOverview, layoutOverview, overviewSvgChunks } from './overview.js';
import { svgChunks } from './svg.js';

export type RenderFormat = 'drawio' | 'svg' | 'png';

export const CONTENT_TYPES: Record<RenderFormat, string> = {
  drawio: 'application/vnd.jgraph.mxfile+xml',
  svg: 'image/svg+xml',
  png: 'image/png',
};

export const EXTENSIONS: Record<RenderFormat, string> = { drawio: 'drawio', svg: 'svg', png: 'png' };

/** Largest PNG rendered, in pixels (a 10,000-node diagram is scaled down to this; SVG keeps all detail). */
export const MAX_PNG_PIXELS = 48_000_000;
export const MAX_PNG_SIDE = 16_000;
/**
 * Above this many nodes the PNG is the overview (accounts, regions and VPCs with their counts per
 * type): the full drawing of more nodes is unreadable once fitted to a screen. draw.io and SVG keep
 * every node and edge at every size.
 */
export const OVERVIEW_MIN_NODES = 300;

export interface RenderStats {
  nodes: number;
  edges: number;
  width: number;
  height: number;
  scale: number;
  layout_ms: number;
  render_ms: number;
  elk_containers: number;
  grid_containers: number;
  routed_edges: number;
  straight_edges: number;
  /** Edges not drawn because the nesting shows them (a node and a container holding it). */
  containment_edges: number;
  /** What the file shows: every node (`full`) or the PNG's overview of a large graph. */
  view: 'full' | 'overview';
}

/** The scale of the PNG: 1.5 for crispness when small, down to what the pixel budget allows. */
export function pngScale(width: number, height: number): number {
  return Math.min(1.5, Math.sqrt(MAX_PNG_PIXELS / (width * height)), MAX_PNG_SIDE / width, MAX_PNG_SIDE / height);
}

/** Yields strings in pieces of about `size` characters (few big writes instead of many small ones). */
export function* batched(pieces: Iterable<string>, size = 64 * 1024): Generator<string> {
  let buffer = '';
  for (const piece of pieces) {
    buffer += piece;
    if (buffer.length >= size) {
      yield buffer;
      buffer = '';
    }
  }
  if (buffer) yield buffer;
}

/**
 * Lays out and renders the graph; `emit` receives the file in pieces (draw.io and SVG are produced
 * incrementally; the PNG is rasterised whole by resvg, then handed over in slices).
 */
export async function renderGraph(
  graph: RenderGraph,
  format: RenderFormat,
  emit: (chunk: Buffer) => Promise<void> | void,
  options: { generatedAt?: string; elkMaxItems?: number; overviewMinNodes?: number } = {},
): Promise<{ diagram: Diagram | null; stats: RenderStats }> {
  const overview = format === 'png' && graph.nodes.length > (options.overviewMinNodes ?? OVERVIEW_MIN_NODES);
  const started = Date.now();
  const diagram = overview ? null : await layoutGraph(graph, { elkMaxItems: options.elkMaxItems });
  const summary = overview ? layoutOverview(buildOverview(graph)) : null;
  const laidOut = Date.now();
  let scale = 1;
  if (format === 'drawio') {
    for (const text of batched(drawioChunks(diagram!, { generatedAt: options.generatedAt }))) await emit(Buffer.from(text, 'utf8'));
  } else if (format === 'svg') {
    for (const text of batched(svgChunks(diagram!))) await emit(Buffer.from(text, 'utf8'));
  } else {
    const width = diagram?.width ?? summary!.width;
    const height = diagram?.height ?? summary!.height;
    scale = pngScale(width, height);
    let svg = '';
    for (const piece of diagram ? svgChunks(diagram) : overviewSvgChunks(summary!)) svg += piece;
    const resvg = new Resvg(svg, {
      fitTo: { mode: 'zoom', value: scale },
      font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans Mono', monospaceFamily: 'DejaVu Sans Mono' },
      shapeRendering: 2,
      textRendering: 1,
    });
    svg = '';
    const png = resvg.render().asPng();
    for (let i = 0; i < png.length; i += 256 * 1024) await emit(png.subarray(i, Math.min(png.length, i + 256 * 1024)));
  }
  return {
    diagram,
    stats: {
      nodes: graph.nodes.length,
      edges: graph.edges.length,
      width: diagram?.width ?? summary!.width,
      height: diagram?.height ?? summary!.height,
      scale: Math.round(scale * 1000) / 1000,
      layout_ms: diagram?.stats.layout_ms ?? laidOut - started,
      render_ms: Date.now() - laidOut,
      elk_containers: diagram?.stats.elk_containers ?? 0,
      grid_containers: diagram?.stats.grid_containers ?? 0,
      routed_edges: diagram?.stats.routed_edges ?? 0,
      straight_edges: diagram?.stats.straight_edges ?? 0,
      containment_edges: diagram?.dropped.containment ?? 0,
      view: diagram ? 'full' : 'overview',
    },
  };
}
