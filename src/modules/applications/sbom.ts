import { randomUUID } from 'node:crypto';
import * as CDX from '@cyclonedx/cyclonedx-library';
import type { AppDeps } from '../../deps.js';
import type { Scope } from '../../platform/db/scope.js';
import { createBusinessServiceService, membersOf, servicePredicate } from './business-service.js';
import { hostsOf, type Host, type HostPackageSource } from './host-software.js';

const serializer = new CDX.Serialize.JsonSerializer(new CDX.Serialize.JSON.Normalize.Factory(CDX.Spec.Spec1dot5));

/**
 * A CycloneDX 1.5 BOM of a business service: the service is `metadata.component`; each host with
 * agent data is an `operating-system` component (bom-ref: its node id); each distinct package
 * (by purl) is a `library` component; `dependencies` say service → hosts → packages. Without agent
 * data the BOM is empty but valid, and `metadata.properties` says `controlgraph:hosts` = 0.
 */
export function buildServiceBom(service: { id: string; name: string; description: string }, hosts: Host[], now: Date, version: string): string {
  const bom = new CDX.Models.Bom();
  bom.serialNumber = `urn:uuid:${randomUUID()}`;
  bom.metadata.timestamp = now;
  bom.metadata.tools.components.add(new CDX.Models.Component(CDX.Enums.ComponentType.Application, 'controlgraph', { version }));
  const root = new CDX.Models.Component(CDX.Enums.ComponentType.Application, service.name, {
    bomRef: `service:${service.id}`,
    description: service.description || undefined,
  });
  root.properties.add(new CDX.Models.Property('controlgraph:service_id', service.id));
  bom.metadata.component = root;
  const packages = new Map<string, CDX.Models.Component>();
  for (const host of hosts) {
    const hostComponent = new CDX.Models.Component(CDX.Enums.ComponentType.OperatingSystem, host.os.id ?? host.os.name ?? 'unknown', {
      bomRef: `host:${host.id}`,
      version: host.os.versionId ?? undefined,
      description: host.name,
    });
    hostComponent.properties.add(new CDX.Models.Property('controlgraph:node_id', host.id));
    hostComponent.properties.add(new CDX.Models.Property('controlgraph:node_type', host.type));
    for (const pkg of host.packages) {
      let component = packages.get(pkg.purl);
      if (!component) {
        component = new CDX.Models.Component(CDX.Enums.ComponentType.Library, pkg.name, { version: pkg.version, purl: pkg.purl, bomRef: pkg.purl });
        if (pkg.manager) component.properties.add(new CDX.Models.Property('controlgraph:package_manager', pkg.manager));
        if (pkg.sourceName && pkg.sourceName !== pkg.name) component.properties.add(new CDX.Models.Property('controlgraph:source_package', pkg.sourceName));
        packages.set(pkg.purl, component);
        bom.components.add(component);
      }
      component.properties.add(new CDX.Models.Property('controlgraph:host', host.id));
      hostComponent.dependencies.add(component.bomRef);
    }
    root.dependencies.add(hostComponent.bomRef);
    bom.components.add(hostComponent);
  }
  bom.metadata.properties.add(new CDX.Models.Property('controlgraph:hosts', String(hosts.length)));
  bom.metadata.properties.add(new CDX.Models.Property('controlgraph:packages', String(packages.size)));
  return serializer.serialize(bom, { sortLists: true });
}

export function createServiceSbom(deps: Pick<AppDeps, 'database' | 'clock' | 'version'>, hostPackages?: HostPackageSource) {
  const db = deps.database.db;
  const services = createBusinessServiceService(deps);
  return async function sbom(scope: Scope, serviceId: string): Promise<string> {
    const service = await services.serviceRow(scope, serviceId);
    const members = (await membersOf(db, scope, [serviceId])).get(serviceId)!;
    const hosts = members.length ? await hostsOf(db, scope, servicePredicate(members), hostPackages) : [];
    return buildServiceBom(service, hosts, deps.clock.now(), deps.version);
  };
}
