/**
 * The outbound guard: the one way the service makes a request on a tenant's behalf (webhooks and
 * other integrations, SSO issuers, metadata and every endpoint a discovery document names,
 * vulnerability sources, discovery sources). See docs/deployment.md, "Outbound requests".
 *
 * API
 *   outboundPolicyOf(config)                 the process's policy (CONTROLGRAPH_OUTBOUND_ALLOW_HOSTS, config.outboundLookup)
 *   createOutboundPolicy(options)            a policy of its own (tests, a tool); derivePolicy(policy, {ca, userAgent, timeoutMs})
 *   outboundFetch(policy, url, init)         -> undici Response; follows redirects (each checked) unless init.redirect is
 *                                            'manual'; init.timeoutMs is the deadline of the whole exchange (body included)
 *   readLimited(response, maxBytes)          -> Buffer; OutboundError 'too_large' beyond maxBytes
 *   openidFetch(policy)                      openid-client's [client.customFetch]
 *   checkOutboundUrl(policy, url)            the rules needing no DNS (scheme, credentials, literal address) -> URL
 *   checkOutboundTarget(policy, url)         the same plus the name's addresses, for a URL a tenant saves (no request made)
 *   resolveOutbound(policy, host, protocol)  -> the checked address to connect to, for protocols other than HTTP (SMTP)
 *   OutboundError {failure, message, detail} failure: refused | unresolvable | no_response | too_large | redirects.
 *                                            `message` may be shown to the tenant; `detail` is for the service log only.
 *
 * The rules. A target must be https:// and resolve only to public addresses: loopback, unspecified,
 * private, carrier-grade NAT, link-local, multicast, reserved, benchmarking and documentation ranges are
 * refused, also inside IPv4-mapped, IPv4-compatible, NAT64 and 6to4 IPv6 forms. The operator's
 * allow-list (host names, addresses, CIDR ranges) makes exceptions, which may also use http://. The
 * name is resolved once per connection and the socket connects to the checked address (no DNS
 * rebinding); every redirect is checked again. Every connection failure reads "no HTTP response":
 * messages never tell a closed port from an open one.
 */
import type { Config } from '../../config.js';
import { createOutboundPolicy, type OutboundPolicy } from './policy.js';

export { addressClass, bareHost, parseV6, refusalOf } from './addresses.js';
export { allowHostsFromEnv, ALLOW_HOSTS_SETTING, createAllowList, DEPRECATED_ALLOW_HOSTS_SETTINGS, type AllowList } from './allow-list.js';
export { closeOutbound, noResponse, openidFetch, outboundAgent, outboundFetch, readLimited, type OutboundInit } from './fetch.js';
export {
  checkOutboundTarget,
  checkOutboundUrl,
  createOutboundPolicy,
  derivePolicy,
  HTTPS_ONLY,
  OutboundError,
  resolveOutbound,
  type CheckedTarget,
  type OutboundFailure,
  type OutboundLog,
  type OutboundLookup,
  type OutboundPolicy,
  type OutboundPolicyOptions,
} from './policy.js';

const policies = new WeakMap<object, OutboundPolicy>();

/** The policy of a process's configuration, made once per configuration object. */
export function outboundPolicyOf(config: Pick<Config, 'outboundAllowHosts' | 'outboundLookup'>): OutboundPolicy {
  let policy = policies.get(config);
  if (!policy) {
    policy = createOutboundPolicy({ allowHosts: config.outboundAllowHosts, lookup: config.outboundLookup });
    policies.set(config, policy);
  }
  return policy;
}
