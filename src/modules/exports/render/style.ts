/**
 * What a diagram looks like: node categories and their colours, severity badges, box geometry and
 * text measurement. Labels use DejaVu Sans Mono (monospace fallback): every glyph advances 0.602 em,
 * so a label's width is known exactly and can be cut to fit its box before rendering.
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

export type Category = 'compute' | 'network' | 'storage' | 'database' | 'security' | 'integration' | 'management' | 'other';

export const CATEGORY_STYLE: Record<Category, { stroke: string; fill: string; shape: string }> = {
  compute: { stroke: '#d86613', fill: '#fdf0e6', shape: 'rounded=1;arcSize=12;' },
  network: { stroke: '#8c4fff', fill: '#f3edff', shape: 'rounded=1;arcSize=45;' },
  storage: { stroke: '#3f8624', fill: '#eef6e9', shape: 'shape=cylinder3;boundedLbl=1;backgroundOutline=1;size=6;' },
  database: { stroke: '#2e73b8', fill: '#e8f1fa', shape: 'shape=cylinder3;boundedLbl=1;backgroundOutline=1;size=6;' },
  security: { stroke: '#c7131f', fill: '#fbeaeb', shape: 'shape=hexagon;perimeter=hexagonPerimeter2;size=0.06;fixedSize=0;' },
  integration: { stroke: '#c1166b', fill: '#fbe9f2', shape: 'shape=process;size=0.04;backgroundOutline=1;' },
  management: { stroke: '#4b5b73', fill: '#eef1f5', shape: 'shape=note;size=10;' },
  other: { stroke: '#6b7785', fill: '#f4f5f7', shape: 'rounded=0;' },
};

const TYPE_CATEGORY: Record<string, Category> = {
  'ec2.instance': 'compute',
  'ec2.volume': 'storage',
  'ec2.snapshot': 'storage',
  'ec2.security_group': 'security',
  'ec2.network_acl': 'security',
  'ec2.key_pair': 'security',
  'ec2.launch_template': 'compute',
  'ecr.repository': 'storage',
  'es.domain': 'database',
  'opensearch.domain': 'database',
};

const SERVICE_CATEGORY: Record<string, Category> = {
  ec2: 'network', lambda: 'compute', ecs: 'compute', eks: 'compute', autoscaling: 'compute', batch: 'compute',
  elasticbeanstalk: 'compute', apprunner: 'compute', compute: 'compute', container: 'compute', k8s: 'compute',
  elasticloadbalancing: 'network', elasticloadbalancingv2: 'network', route53: 'network', cloudfront: 'network',
  apigateway: 'network', apigatewayv2: 'network', networkfirewall: 'network', globalaccelerator: 'network', network: 'network',
  s3: 'storage', efs: 'storage', fsx: 'storage', backup: 'storage', storage: 'storage', glacier: 'storage',
  rds: 'database', dynamodb: 'database', redshift: 'database', elasticache: 'database', docdb: 'database',
  neptune: 'database', memorydb: 'database', sql: 'database', database: 'database',
  iam: 'security', kms: 'security', secretsmanager: 'security', acm: 'security', guardduty: 'security',
  wafv2: 'security', waf: 'security', securityhub: 'security', accessanalyzer: 'security', cognito: 'security',
  sqs: 'integration', sns: 'integration', events: 'integration', stepfunctions: 'integration', kinesis: 'integration',
  msk: 'integration', kafka: 'integration', appsync: 'integration', mq: 'integration', amazonmq: 'integration',
  cloudtrail: 'management', cloudwatch: 'management', logs: 'management', config: 'management', ssm: 'management',
  cloudformation: 'management', organizations: 'management', host: 'compute',
};

/** The category of a dotted node type `<provider>.<service>.<type>`. */
export function categoryOf(type: string): Category {
  const [, service = '', kind = ''] = type.split('.');
  return TYPE_CATEGORY[`${service}.${kind}`] ?? SERVICE_CATEGORY[service] ?? 'other';
}

/** The draw.io style of a node type: its category's shape and colours, one style per type. */
export function drawioNodeStyle(type: string): string {
  const c = CATEGORY_STYLE[categoryOf(type)];
  return `${c.shape}whiteSpace=wrap;html=1;fillColor=${c.fill};strokeColor=${c.stroke};strokeWidth=2;align=left;spacingLeft=10;verticalAlign=middle;fontFamily=DejaVu Sans Mono;fontSize=12;`;
}

export type ContainerKind = 'account' | 'region' | 'vpc' | 'subnet';

export const CONTAINER_STYLE: Record<ContainerKind, { stroke: string; fill: string; dashed: boolean; title: string }> = {
  account: { stroke: '#232f3e', fill: '#ffffff', dashed: false, title: 'Account' },
  region: { stroke: '#147eba', fill: '#f7fbfe', dashed: true, title: 'Region' },
  vpc: { stroke: '#8c4fff', fill: '#faf7ff', dashed: false, title: 'VPC' },
  subnet: { stroke: '#3f8624', fill: '#f5faf2', dashed: false, title: 'Subnet' },
};

export function drawioContainerStyle(kind: ContainerKind): string {
  const c = CONTAINER_STYLE[kind];
  return `swimlane;container=1;collapsible=0;startSize=${HEADER_H};horizontal=1;rounded=0;html=1;whiteSpace=wrap;align=left;spacingLeft=8;fontStyle=1;fontFamily=DejaVu Sans Mono;fontSize=12;fillColor=${c.fill};swimlaneFillColor=${c.fill};strokeColor=${c.stroke};fontColor=${c.stroke};dashed=${c.dashed ? 1 : 0};`;
}

// Geometry (pixels at scale 1).
export const BOX_W = 220;
export const BOX_H = 52;
export const BOX_GAP_X = 24;
export const BOX_GAP_Y = 20;
export const HEADER_H = 26;
export const PAD = 14;
export const STRIPE_W = 6;
export const NAME_FONT = 12;
export const TYPE_FONT = 10;
export const TITLE_FONT = 12;
export const BADGE_FONT = 10;
export const BADGE_H = 16;

const ADVANCE = 0.6021; // DejaVu Sans Mono: 1233 / 2048 units per em, every glyph.

export function textWidth(text: string, fontSize: number): number {
  return [...text].length * ADVANCE * fontSize;
}

/** Cuts a label to fit `width` pixels, ending it with an ellipsis when cut. */
export function fitText(text: string, fontSize: number, width: number): string {
  const chars = [...text.replace(/\s+/g, ' ').trim()];
  const max = Math.floor(width / (ADVANCE * fontSize) + 1e-9);
  if (chars.length <= max) return chars.join('');
  if (max <= 1) return max === 1 ? '…' : '';
  return chars.slice(0, max - 1).join('') + '…';
}

/** Badge text: the top severity's letter and the number of open findings. */
export function badgeText(severity: Severity, findings: number): string {
  return `${SEVERITY_STYLE[severity].letter} ${findings > 999 ? '999+' : findings}`;
}

export function badgeWidth(text: string): number {
  return Math.ceil(textWidth(text, BADGE_FONT)) + 10;
}

/** Node label pieces that fit the box: name on the first line, type (and the badge) on the second. */
export function boxLabels(name: string, type: string, severity: Severity | null, findings: number) {
  const inner = BOX_W - STRIPE_W - 8 - 8;
  const badge = severity ? badgeText(severity, findings) : null;
  const badgeW = badge ? badgeWidth(badge) + 6 : 0;
  return {
    name: fitText(name || '(unnamed)', NAME_FONT, inner),
    type: fitText(type, TYPE_FONT, inner - badgeW),
    badge,
  };
}

export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!).replace(
    // Characters XML 1.0 cannot carry at all.
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g,
    '',
  );
}
