import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { addressClass, bareHost, refusalOf } from './addresses.js';
import { createAllowList, type AllowList } from './allow-list.js';

/** Answers a DNS question: every address of a name. Injected in tests (no real DNS there). */
export type OutboundLookup = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export interface OutboundPolicyOptions {
  /** Host names, IP addresses and CIDR ranges that may be private and may use http:// (CONTROLGRAPH_OUTBOUND_ALLOW_HOSTS). */
  allowHosts?: readonly string[];
  lookup?: OutboundLookup;
  lookupTimeoutMs?: number;
  /** Trusted certificate authorities for https (PEM); undefined means Node's bundled roots. */
  ca?: string[];
  userAgent?: string;
  /** Default deadline of a whole exchange (every redirect and reading the body), in milliseconds. */
  timeoutMs?: number;
  /** Default number of redirects outboundFetch follows (each one checked again). */
  maxRedirects?: number;
  /** Where the cause of a failure goes (the connection's own error, which tenants are not shown). */
  log?: OutboundLog;
}

export interface OutboundLog {
  info(details: object, message: string): void;
}

export interface OutboundPolicy {
  readonly allowList: AllowList;
  readonly lookup: OutboundLookup;
  readonly lookupTimeoutMs: number;
  readonly ca: string[] | undefined;
  readonly userAgent: string;
  readonly timeoutMs: number;
  readonly maxRedirects: number;
  readonly log: OutboundLog | undefined;
}

/**
 * Why a request on a tenant's behalf did not happen or failed. `message` is what a tenant may read:
 * it names the rule that refused the target, never a connection's fate beyond "no HTTP response"
 * (a closed port, a port that does not speak HTTP and a silent one read the same). `detail` is for
 * the service log only.
 */
export type OutboundFailure = 'refused' | 'unresolvable' | 'no_response' | 'too_large' | 'redirects';

export class OutboundError extends Error {
  override name = 'OutboundError';
  constructor(
    readonly failure: OutboundFailure,
    message: string,
    readonly detail?: string,
  ) {
    super(message);
  }
}

export interface CheckedTarget {
  hostname: string;
  /** The address to connect to: one the policy checked (never resolve the name again). */
  address: string;
  family: 4 | 6;
  /** True when the operator's allow-list covers the target (it may then be private and use http). */
  allowListed: boolean;
}

const systemLookup: OutboundLookup = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

export function createOutboundPolicy(options: OutboundPolicyOptions = {}): OutboundPolicy {
  return {
    allowList: createAllowList(options.allowHosts ?? []),
    lookup: options.lookup ?? systemLookup,
    lookupTimeoutMs: options.lookupTimeoutMs ?? 5_000,
    ca: options.ca,
    userAgent: options.userAgent ?? 'ControlGraph',
    timeoutMs: options.timeoutMs ?? 10_000,
    maxRedirects: options.maxRedirects ?? 3,
    log: options.log,
  };
}

/** The same policy with other transport options (a private CA, a user agent, a deadline, a log). */
export function derivePolicy(policy: OutboundPolicy, options: Pick<OutboundPolicyOptions, 'ca' | 'userAgent' | 'timeoutMs' | 'maxRedirects' | 'log'>): OutboundPolicy {
  return { ...policy, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) };
}

export const HTTPS_ONLY = 'only https:// URLs are allowed (http:// only to hosts the operator allow-lists)';

const notAllowed = (what: string) => new OutboundError('refused', `the address is not allowed (${what})`);

/**
 * The rules that need no DNS: an absolute http(s) URL without credentials, https unless the host is
 * allow-listed, no refused literal address. A name with http:// passes here only when the allow-list
 * has ranges its addresses may fall in; the connection decides then.
 */
export function checkOutboundUrl(policy: OutboundPolicy, input: string | URL): URL {
  let url: URL;
  try {
    url = typeof input === 'string' ? new URL(input) : input;
  } catch {
    throw new OutboundError('refused', 'is not an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new OutboundError('refused', HTTPS_ONLY);
  if (url.username || url.password) throw new OutboundError('refused', 'must not contain a user name or password');
  const host = bareHost(url.hostname);
  const literal = isIP(host) !== 0;
  const listed = policy.allowList.coversName(host);
  if (literal && !listed) {
    const reason = refusalOf(host);
    if (reason) throw notAllowed(`${host} is ${addressClass(reason)}`);
  }
  if (url.protocol === 'http:' && !listed && (literal || !policy.allowList.hasRanges)) throw new OutboundError('refused', HTTPS_ONLY);
  return url;
}

/**
 * Resolves a host once and checks every address it resolves to; the caller connects to the returned
 * address. `protocol` 'http:' also requires the allow-list to cover the target.
 */
export async function resolveOutbound(policy: OutboundPolicy, hostname: string, protocol = 'https:'): Promise<CheckedTarget> {
  const host = bareHost(hostname).replace(/\.$/, '');
  const family = isIP(host);
  let addresses: Array<{ address: string; family: number }>;
  if (family) {
    addresses = [{ address: host, family }];
  } else {
    let timer: NodeJS.Timeout | undefined;
    try {
      addresses = await Promise.race([
        policy.lookup(host),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('timed out')), policy.lookupTimeoutMs);
        }),
      ]);
    } catch (error) {
      throw new OutboundError('unresolvable', `cannot resolve ${host}`, (error as NodeJS.ErrnoException).code ?? (error as Error).message);
    } finally {
      clearTimeout(timer);
    }
    if (addresses.length === 0) throw new OutboundError('unresolvable', `cannot resolve ${host}`, 'no addresses');
  }
  const nameListed = policy.allowList.coversName(host);
  let covered = true;
  for (const { address } of addresses) {
    const inRange = policy.allowList.coversAddress(address);
    covered &&= inRange;
    if (nameListed || inRange) continue;
    const reason = refusalOf(address);
    if (reason) throw notAllowed(family ? `${host} is ${addressClass(reason)}` : `${host} resolves to ${addressClass(reason)}`);
  }
  const allowListed = nameListed || covered;
  if (protocol === 'http:' && !allowListed) throw new OutboundError('refused', HTTPS_ONLY);
  const first = addresses[0]!;
  return { hostname: host, address: first.address, family: first.family === 6 ? 6 : 4, allowListed };
}

/**
 * checkOutboundUrl and resolveOutbound together, for checking a URL a tenant saves (no request is
 * made). An https:// name that does not resolve now passes: it is checked again at every request.
 */
export async function checkOutboundTarget(policy: OutboundPolicy, input: string | URL): Promise<URL> {
  const url = checkOutboundUrl(policy, input);
  try {
    await resolveOutbound(policy, url.hostname, url.protocol);
  } catch (error) {
    if (!(error instanceof OutboundError && error.failure === 'unresolvable')) throw error;
    // http:// needs the allow-list to cover the name's addresses, which cannot be confirmed now.
    if (url.protocol === 'http:' && !policy.allowList.coversName(url.hostname)) throw new OutboundError('refused', HTTPS_ONLY);
  }
  return url;
}
