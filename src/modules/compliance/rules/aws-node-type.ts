import { propertyModel } from './property-paths.js';

/**
 * Node types of AWS resources derive from their AWS Config resource type:
 * `AWS::<Service>::<Type>` becomes `aws.<service>.<type>`, where
 *
 * - the service is only lower-cased, never split (`ElasticLoadBalancingV2` → `elasticloadbalancingv2`,
 *   `EC2` → `ec2`), so the segment stays the name AWS uses in ARNs and CLIs;
 * - the type is snake_cased from CamelCase. An acronym run stays one word and ends where the next
 *   capitalised word starts (`DBInstance` → `db_instance`, `VPCEndpoint` → `vpc_endpoint`,
 *   `IPAMPool` → `ipam_pool`); digits belong to the word before them (`EC2Fleet` → `ec2_fleet`,
 *   `LocationS3` → `location_s3`). The rule is mechanical, so mixed-case brands split as their
 *   letters say: `FSxLustre` → `f_sx_lustre`, `GraphQLApi` → `graph_ql_api`.
 *
 * Lower-casing loses information, so the reverse direction looks the type up among the known AWS
 * Config types (the shipped schema by default). A unit test checks that the mapping is one-to-one
 * over every type in the schema.
 */

const CONFIG_TYPE = /^AWS::([A-Za-z0-9]+)::([A-Za-z0-9]+)$/;

export function isConfigResourceType(value: string): boolean {
  return CONFIG_TYPE.test(value);
}

export function nodeTypeFromConfigType(configType: string): string {
  const match = CONFIG_TYPE.exec(configType);
  if (!match) throw new Error(`not an AWS Config resource type: ${configType}`);
  return `aws.${match[1]!.toLowerCase()}.${snakeCase(match[2]!)}`;
}

function snakeCase(name: string): string {
  return name
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase();
}

export interface AwsNodeTypeIndex {
  toNodeType(configType: string): string;
  /** The AWS Config type of a node type, or undefined when no known type maps to it. */
  toConfigType(nodeType: string): string | undefined;
}

/** A two-way index over the given AWS Config types; throws if two of them map to one node type. */
export function awsNodeTypeIndex(configTypes: Iterable<string>): AwsNodeTypeIndex {
  const reverse = new Map<string, string>();
  for (const configType of configTypes) {
    const nodeType = nodeTypeFromConfigType(configType);
    const clash = reverse.get(nodeType);
    if (clash !== undefined && clash !== configType) {
      throw new Error(`${clash} and ${configType} both map to node type ${nodeType}`);
    }
    reverse.set(nodeType, configType);
  }
  return { toNodeType: nodeTypeFromConfigType, toConfigType: (nodeType) => reverse.get(nodeType) };
}

let schemaIndex: AwsNodeTypeIndex | undefined;

/** Reverse lookup over the types of the shipped AWS Config schema. */
export function configTypeFromNodeType(nodeType: string): string | undefined {
  schemaIndex ??= awsNodeTypeIndex(propertyModel().resourceTypes());
  return schemaIndex.toConfigType(nodeType);
}
