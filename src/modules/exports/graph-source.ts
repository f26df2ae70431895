import { sql, type Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { Scope } from '../../platform/db/scope.js';
import { activeFindingsTable } from '../compliance/index.js';
import { edgePage, nodesInScope } from '../graph/index.js';
import { SEVERITIES, type Severity } from './render/style.js';
import { SUBNET_TYPE, VPC_TYPE, type GraphEdge, type GraphNode, type RenderGraph } from './render/model.js';

const PAGE = 5000;
const ELBV2_TYPE = 'aws.elasticloadbalancingv2.load_balancer';

/**
 * The workspace's graph as the renderer needs it, read page by page: per node only its label fields
 * and where it sits (VPC and subnet, from the AWS Config item: configuration.vpcId/subnetId, the
 * item's relationships, or else an edge to a VPC or subnet node), what picks its drawing (a load
 * balancer's type, a subnet's mapPublicIpOnLaunch), and the top severity and number of its active
 * open findings (accepted ones do not count).
 */
export async function loadRenderGraph(db: Kysely<Database>, scope: Scope, now: Date): Promise<RenderGraph> {
  const nodes: GraphNode[] = [];
  let after = '';
  for (;;) {
    const rows = await sql<{
      id: string;
      name: string;
      type: string;
      provider: string;
      region: string;
      account_id: string | null;
      native_id: string;
      vpc: string | null;
      subnet: string | null;
      variant: string | null;
    }>`
      SELECT n.id, n.name, n.type, n.provider, n.region, n.account_id, n.native_id,
        coalesce(
          n.properties #>> '{configuration,vpcId}', n.properties #>> '{configuration,VpcId}',
          n.properties #>> '{configuration,dBSubnetGroup,vpcId}', n.properties #>> '{configuration,vpcConfig,vpcId}',
          jsonb_path_query_first(n.properties, '$.relationships[*] ? (@.resourceType == "AWS::EC2::VPC").resourceId') #>> '{}'
        ) AS vpc,
        coalesce(
          n.properties #>> '{configuration,subnetId}', n.properties #>> '{configuration,SubnetId}',
          CASE WHEN jsonb_array_length(jsonb_path_query_array(n.properties, '$.relationships[*] ? (@.resourceType == "AWS::EC2::Subnet").resourceId')) = 1
            THEN jsonb_path_query_first(n.properties, '$.relationships[*] ? (@.resourceType == "AWS::EC2::Subnet").resourceId') #>> '{}' END
        ) AS subnet,
        CASE n.type
          WHEN ${ELBV2_TYPE} THEN coalesce(n.properties #>> '{configuration,type}', n.properties #>> '{configuration,Type}')
          WHEN ${SUBNET_TYPE} THEN n.properties #>> '{configuration,mapPublicIpOnLaunch}'
        END AS variant
      FROM ${nodesInScope(scope)} n
      WHERE n.id > ${after}
      ORDER BY n.id
      LIMIT ${PAGE}`.execute(db);
    for (const r of rows.rows) {
      nodes.push({
        id: r.id,
        name: r.name,
        type: r.type,
        provider: r.provider,
        region: r.region,
        account: r.account_id,
        nativeId: r.native_id,
        vpc: r.vpc,
        subnet: r.type === SUBNET_TYPE || r.type === VPC_TYPE ? null : r.subnet,
        variant: r.variant,
        severity: null,
        findings: 0,
      });
    }
    if (rows.rows.length < PAGE) break;
    after = rows.rows[rows.rows.length - 1]!.id;
  }
  if (nodes.length === 0) return { nodes, edges: [] };
  const byId = new Map(nodes.map((n) => [n.id, n]));

  const findings = await sql<{ resource_id: string; top: number; n: number }>`
    SELECT f.resource_id, max(f.severity_rank)::int AS top, count(*)::int AS n
    FROM ${await activeFindingsTable(db, scope, now)} f
    GROUP BY f.resource_id`.execute(db);
  for (const f of findings.rows) {
    const node = byId.get(f.resource_id);
    if (!node) continue;
    node.severity = SEVERITIES[5 - f.top] as Severity;
    node.findings = f.n;
  }

  const edges: GraphEdge[] = [];
  let cursor: { source: string; target: string; type: string } | null = null;
  for (;;) {
    const c: { source: string; target: string; type: string } | null = cursor;
    const rows = await edgePage(db, scope, c, PAGE);
    edges.push(...rows);
    if (rows.length < PAGE) break;
    cursor = rows[rows.length - 1]!;
  }

  // Containment from edges, for nodes whose properties do not say where they sit.
  for (const e of edges) {
    for (const [a, b] of [
      [e.source, e.target],
      [e.target, e.source],
    ] as const) {
      const node = byId.get(a);
      const other = byId.get(b);
      if (!node || !other || node.type === VPC_TYPE) continue;
      if (other.type === SUBNET_TYPE && node.type !== SUBNET_TYPE && !node.subnet) node.subnet = other.nativeId;
      else if (other.type === VPC_TYPE && !node.vpc) node.vpc = other.nativeId;
    }
  }
  return { nodes, edges };
}
