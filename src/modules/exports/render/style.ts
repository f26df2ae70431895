/**
 * What a diagram looks like: severity badges, node and container geometry, container styles and
 * text measurement. Labels use DejaVu Sans Mono (monospace fallback): every glyph advances 0.602 em,
 * so a label's width is known exactly and can be cut to fit before rendering. Node shapes are in
 * aws-shapes.ts.
 */

export const SEVERITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const SEVERITY_STYLE: Record<Severity, { fill: string; text: string; letter: string }> = {
  CRITICAL: { fill: '#b3123a', text: '#ffffff', letter: 'C' },
  HIGH: { fill: '#e4572e', text: '#ffffff', letter: 'H' },
  MEDIUM: { fill: '#f2b134', text: '#1f1f1f', letter: 'M' },
  LOW: { fill: '#2f7ec9', text: '#ffffff', letter: 'L' },
  INFO: { fill: '#78909c', text: '#ffffff', letter: 'I' },
};

export type ContainerKind = 'account' | 'no_account' | 'managed' | 'region' | 'global' | 'vpc' | 'subnet';

/** A container's look; `variant` tells public from private subnets (`mapPublicIpOnLaunch`). */
export type ContainerLook = 'account' | 'no_account' | 'managed' | 'region' | 'global' | 'vpc' | 'subnet_public' | 'subnet_private' | 'subnet';

export function containerLook(kind: ContainerKind, variant: string | null): ContainerLook {
  if (kind !== 'subnet') return kind;
  return variant === 'true' ? 'subnet_public' : variant === 'false' ? 'subnet_private' : 'subnet';
}

const GROUP =
  'points=[[0,0],[0.25,0],[0.5,0],[0.75,0],[1,0],[1,0.25],[1,0.5],[1,0.75],[1,1],[0.75,1],[0.5,1],[0.25,1],[0,1],[0,0.75],[0,0.5],[0,0.25]];' +
  'outlineConnect=0;gradientColor=none;html=1;whiteSpace=wrap;fontSize=12;fontStyle=0;container=1;pointerEvents=0;collapsible=0;recursiveResize=0;';

/**
 * The groups of draw.io's AWS sidebar ("AWS / Groups"), by look; `stroke` and `title` also colour the
 * PNG's drawing of the same group. The plain dashed group is the sidebar's "Generic group".
 */
export const CONTAINER_STYLE: Record<ContainerLook, { drawio: string; stroke: string; fill: string; title: string; dashed: boolean }> = {
  account: {
    drawio: `${GROUP}shape=mxgraph.aws4.group;grIcon=mxgraph.aws4.group_account;strokeColor=#CD2264;fillColor=none;verticalAlign=top;align=left;spacingLeft=30;fontColor=#CD2264;dashed=0;`,
    stroke: '#CD2264',
    fill: '#ffffff',
    title: '#CD2264',
    dashed: false,
  },
  managed: {
    drawio: `${GROUP}shape=mxgraph.aws4.group;grIcon=mxgraph.aws4.group_aws_cloud_alt;strokeColor=#232F3E;fillColor=none;verticalAlign=top;align=left;spacingLeft=30;fontColor=#232F3E;dashed=0;`,
    stroke: '#232F3E',
    fill: '#ffffff',
    title: '#232F3E',
    dashed: false,
  },
  no_account: {
    drawio:
      'fillColor=none;strokeColor=#5A6C86;dashed=1;verticalAlign=top;align=left;spacingLeft=8;fontStyle=0;fontColor=#5A6C86;whiteSpace=wrap;html=1;container=1;pointerEvents=0;collapsible=0;recursiveResize=0;',
    stroke: '#5A6C86',
    fill: '#ffffff',
    title: '#5A6C86',
    dashed: true,
  },
  region: {
    drawio: `${GROUP}shape=mxgraph.aws4.group;grIcon=mxgraph.aws4.group_region;strokeColor=#00A4A6;fillColor=none;verticalAlign=top;align=left;spacingLeft=30;fontColor=#147EBA;dashed=1;`,
    stroke: '#00A4A6',
    fill: '#ffffff',
    title: '#147EBA',
    dashed: true,
  },
  global: {
    drawio:
      'fillColor=#EFF0F3;strokeColor=none;dashed=0;verticalAlign=top;align=left;spacingLeft=8;fontStyle=0;fontColor=#232F3D;whiteSpace=wrap;html=1;container=1;pointerEvents=0;collapsible=0;recursiveResize=0;',
    stroke: '#EFF0F3',
    fill: '#EFF0F3',
    title: '#232F3D',
    dashed: false,
  },
  vpc: {
    drawio: `${GROUP}shape=mxgraph.aws4.group;grIcon=mxgraph.aws4.group_vpc2;strokeColor=#8C4FFF;fillColor=none;verticalAlign=top;align=left;spacingLeft=30;fontColor=#AAB7B8;dashed=0;`,
    stroke: '#8C4FFF',
    fill: '#ffffff',
    title: '#8C4FFF',
    dashed: false,
  },
  subnet_public: {
    drawio: `${GROUP}shape=mxgraph.aws4.group;grIcon=mxgraph.aws4.group_security_group;grStroke=0;strokeColor=#7AA116;fillColor=#F2F6E8;verticalAlign=top;align=left;spacingLeft=30;fontColor=#248814;dashed=0;`,
    stroke: '#7AA116',
    fill: '#F2F6E8',
    title: '#248814',
    dashed: false,
  },
  subnet_private: {
    drawio: `${GROUP}shape=mxgraph.aws4.group;grIcon=mxgraph.aws4.group_security_group;grStroke=0;strokeColor=#00A4A6;fillColor=#E6F6F7;verticalAlign=top;align=left;spacingLeft=30;fontColor=#147EBA;dashed=0;`,
    stroke: '#00A4A6',
    fill: '#E6F6F7',
    title: '#147EBA',
    dashed: false,
  },
  subnet: {
    drawio:
      'fillColor=none;strokeColor=#5A6C86;dashed=1;verticalAlign=top;align=left;spacingLeft=8;fontStyle=0;fontColor=#5A6C86;whiteSpace=wrap;html=1;container=1;pointerEvents=0;collapsible=0;recursiveResize=0;',
    stroke: '#5A6C86',
    fill: '#F7F8FA',
    title: '#5A6C86',
    dashed: true,
  },
};

/** Looks whose draw.io group carries its icon in the top-left corner (the label starts after it). */
export const ICON_GROUPS = new Set<ContainerLook>(['account', 'managed', 'region', 'vpc', 'subnet_public', 'subnet_private']);

// Geometry (pixels at scale 1). A node is an item ITEM_W × ITEM_H: its icon (ICON square, centred at
// the top), then up to two lines of name and one of type below it.
export const ITEM_W = 160;
export const ITEM_H = 92;
export const ICON = 48;
export const LABEL_GAP = 4;
export const LINE_H = 13;
export const ITEM_GAP_X = 24;
export const ITEM_GAP_Y = 20;
export const HEADER_H = 28;
export const PAD = 14;
export const NAME_FONT = 11;
export const TYPE_FONT = 10;
export const TITLE_FONT = 12;
export const BADGE_FONT = 10;
export const BADGE_H = 16;
export const EDGE_FONT = 9;

/** Where an item's icon is, relative to the item. */
export const ICON_X = (ITEM_W - ICON) / 2;

const ADVANCE = 0.6021; // DejaVu Sans Mono: 1233 / 2048 units per em, every glyph.

export function textWidth(text: string, fontSize: number): number {
  return [...text].length * ADVANCE * fontSize;
}

/** How many characters fit `width` pixels. */
export function charsFitting(fontSize: number, width: number): number {
  return Math.floor(width / (ADVANCE * fontSize) + 1e-9);
}

/** Cuts a label to fit `width` pixels, ending it with an ellipsis when cut. */
export function fitText(text: string, fontSize: number, width: number): string {
  const chars = [...text.replace(/\s+/g, ' ').trim()];
  const max = charsFitting(fontSize, width);
  if (chars.length <= max) return chars.join('');
  if (max <= 1) return max === 1 ? '…' : '';
  return chars.slice(0, max - 1).join('') + '…';
}

/** A name on at most two lines of `max` characters, broken after a separator when one is near the end. */
function wrapName(name: string, max: number): string[] {
  const chars = [...name.replace(/\s+/g, ' ').trim()];
  if (chars.length <= max) return [chars.join('')];
  let cut = max;
  for (let i = max; i > max / 2; i--) {
    if (' -_./:'.includes(chars[i - 1]!)) {
      cut = i;
      break;
    }
  }
  const first = chars.slice(0, cut).join('').trimEnd();
  const rest = chars.slice(cut).join('').trimStart();
  return [first, fitText(rest, NAME_FONT, max * ADVANCE * NAME_FONT)];
}

/** Badge text: the top severity's letter and the number of open findings. */
export function badgeText(severity: Severity, findings: number): string {
  return `${SEVERITY_STYLE[severity].letter} ${findings > 999 ? '999+' : findings}`;
}

export function badgeWidth(text: string): number {
  return Math.ceil(textWidth(text, BADGE_FONT)) + 10;
}

/**
 * A node's label lines, each cut to the item's width: the name (on two lines when long), or the name
 * and a note (the node's own account when it is drawn in another account's VPC), then the type.
 */
export function itemLabels(name: string, typeLabel: string, note: string | null = null): { name: string[]; type: string } {
  const max = charsFitting(NAME_FONT, ITEM_W);
  const lines = note ? [fitText(name || '(unnamed)', NAME_FONT, ITEM_W), fitText(note, NAME_FONT, ITEM_W)] : wrapName(name || '(unnamed)', max);
  return { name: lines, type: fitText(typeLabel, TYPE_FONT, ITEM_W) };
}

export function escapeXml(text: string): string {
  return text
    .replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!)
    .replace(
      // Characters XML 1.0 cannot carry at all.
      // eslint-disable-next-line no-control-regex
      /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g,
      '',
    );
}

/** An edge type as a label ("routes_to" → "routes to"); empty for types the drawing already says. */
export function edgeLabel(type: string): string {
  return QUIET_EDGE_TYPES.has(type) ? '' : type.replace(/_/g, ' ');
}

/**
 * Edge types whose label adds nothing: the arrow from a resource to a security group is its use of
 * the group.
 */
const QUIET_EDGE_TYPES = new Set(['uses_security_group']);
