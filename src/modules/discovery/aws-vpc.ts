import type { Any, AwsReader } from './aws.js';
import { awsNode, configCase, plain, tagObject } from './inventory.js';

/**
 * The VPC network resources of the aws plugin beyond VPCs, subnets and security groups (aws.ts):
 * network ACLs, transit gateways, site-to-site VPN connections and Client VPN endpoints, each from
 * its EC2 Describe call, in the property model AWS Config records for the type: camelCase for
 * AWS::EC2::NetworkAcl and AWS::EC2::VPNConnection (the EC2 API's shapes), CloudFormation's
 * PascalCase for AWS::EC2::TransitGateway and AWS::EC2::ClientVpnEndpoint.
 */
export async function readVpcNetwork(r: AwsReader, region: string): Promise<void> {
  await r.guard('ec2', region, 'network ACLs', () => readNetworkAcls(r, region));
  await r.guard('ec2', region, 'transit gateways', () => readTransitGateways(r, region));
  await r.guard('ec2', region, 'VPN connections', () => readVpnConnections(r, region));
  await r.guard('ec2', region, 'Client VPN endpoints', () => readClientVpnEndpoints(r, region));
}

const nameTag = (tags: Record<string, string>, fallback: string) => tags.Name || fallback;

async function readNetworkAcls(r: AwsReader, region: string): Promise<void> {
  for (const page of await r.all('ec2', region, 'DescribeNetworkAcls')) {
    for (const acl of (page.NetworkAcls ?? []) as Any[]) {
      const tags = tagObject(acl.Tags);
      const id = r.add(
        awsNode({
          configType: 'AWS::EC2::NetworkAcl',
          nativeId: acl.NetworkAclId,
          name: nameTag(tags, acl.NetworkAclId),
          region,
          account: acl.OwnerId ?? r.account,
          configuration: configCase(acl) as Any,
          tags,
          relationships: [{ resourceType: 'AWS::EC2::VPC', resourceId: acl.VpcId, relationshipName: 'Is contained in Vpc' }],
        }),
        acl.NetworkAclId,
      );
      r.refer(id, acl.VpcId, 'in_vpc');
      r.refer(
        id,
        ((acl.Associations ?? []) as Any[]).map((a) => a.SubnetId),
        'applies_to',
      );
    }
  }
}

async function readTransitGateways(r: AwsReader, region: string): Promise<void> {
  for (const page of await r.all('ec2', region, 'DescribeTransitGateways')) {
    for (const g of (page.TransitGateways ?? []) as Any[]) {
      const tags = tagObject(g.Tags);
      // AWS Config's AWS::EC2::TransitGateway is CloudFormation's shape: the options at the top level.
      const configuration = { Id: g.TransitGatewayId, Description: g.Description, ...(plain(g.Options ?? {}) as Any) };
      r.add(
        awsNode({
          configType: 'AWS::EC2::TransitGateway',
          nativeId: g.TransitGatewayId,
          name: nameTag(tags, g.TransitGatewayId),
          region,
          account: g.OwnerId ?? r.account,
          arn: g.TransitGatewayArn ?? null,
          configuration,
          tags,
        }),
        g.TransitGatewayId,
        g.TransitGatewayArn,
      );
    }
  }
}

async function readVpnConnections(r: AwsReader, region: string): Promise<void> {
  for (const page of await r.all('ec2', region, 'DescribeVpnConnections')) {
    for (const v of (page.VpnConnections ?? []) as Any[]) {
      const tags = tagObject(v.Tags);
      const configuration = configCase(v) as Any;
      // AWS Config records the state as `{value}`.
      configuration.state = v.State === undefined ? undefined : { value: v.State };
      // The customer gateway configuration and the tunnel options carry the tunnels' pre-shared keys: not kept.
      delete configuration.customerGatewayConfiguration;
      for (const t of (configuration.options?.tunnelOptions ?? []) as Any[]) delete t.preSharedKey;
      r.add(
        awsNode({ configType: 'AWS::EC2::VPNConnection', nativeId: v.VpnConnectionId, name: nameTag(tags, v.VpnConnectionId), region, account: r.account, configuration, tags }),
        v.VpnConnectionId,
      );
    }
  }
}

async function readClientVpnEndpoints(r: AwsReader, region: string): Promise<void> {
  for (const page of await r.all('ec2', region, 'DescribeClientVpnEndpoints')) {
    for (const e of (page.ClientVpnEndpoints ?? []) as Any[]) {
      const tags = tagObject(e.Tags);
      const { ClientVpnEndpointId, Tags: _tags, ...rest } = e;
      const configuration = { Id: ClientVpnEndpointId, ...(plain(rest) as Any) };
      const id = r.add(
        awsNode({
          configType: 'AWS::EC2::ClientVpnEndpoint',
          nativeId: ClientVpnEndpointId,
          name: nameTag(tags, ClientVpnEndpointId),
          region,
          account: r.account,
          configuration,
          tags,
        }),
        ClientVpnEndpointId,
      );
      r.refer(id, e.VpcId, 'in_vpc');
      r.refer(id, e.SecurityGroupIds, 'uses_security_group');
    }
  }
}
