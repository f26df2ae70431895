import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  allowHostsFromEnv,
  checkOutboundTarget,
  checkOutboundUrl,
  createOutboundPolicy,
  openidFetch,
  outboundFetch,
  OutboundError,
  parseV6,
  readLimited,
  refusalOf,
  resolveOutbound,
  type OutboundLookup,
} from '../../src/platform/outbound/index.js';

/**
 * The platform's outbound guard against real loopback servers. Names are answered by an injected
 * lookup (no real DNS); a name "resolving" to 127.0.0.1 stands for any private address.
 */

describe('refusalOf: address classes that may not be targets', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['0.0.0.0', 'unspecified ("this network")'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.254', 'carrier-grade NAT'],
    ['224.0.0.251', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['198.18.0.1', 'benchmarking'],
    ['192.0.2.10', 'documentation'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['fc00::1', 'unique local (private)'],
    ['fd12:3456:789a::1', 'unique local (private)'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback'],
    ['::ffff:10.1.2.3', 'IPv4-mapped private'],
    ['::ffff:169.254.169.254', 'IPv4-mapped link-local'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 link-local'],
    ['2002:7f00:1::1', '6to4 loopback'],
    ['::127.0.0.1', 'IPv4-compatible (deprecated)'],
    ['2001:db8::1', 'documentation'],
    // The forms of issue 20 (169.254.169.254 = a9fe:a9fe), and the unspecified address mapped.
    ['::ffff:a9fe:a9fe', 'IPv4-mapped link-local'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', 'IPv4-mapped link-local'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 link-local'],
    ['2002:a9fe:a9fe::', '6to4 link-local'],
    ['::a9fe:a9fe', 'IPv4-compatible (deprecated)'],
    ['::ffff:0.0.0.0', 'IPv4-mapped unspecified ("this network")'],
  ])('%s is %s', (address, reason) => {
    expect(refusalOf(address)).toBe(reason);
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '169.255.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:0808:0808::1'])(
    '%s is public',
    (address) => {
      expect(refusalOf(address)).toBeNull();
    },
  );

  it('parses IPv6 forms', () => {
    expect(parseV6('::1')).toEqual([...Array(15).fill(0), 1]);
    expect(parseV6('1:2:3:4:5:6:7:8')).toEqual([0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8]);
    expect(parseV6('::ffff:1.2.3.4')?.slice(10)).toEqual([0xff, 0xff, 1, 2, 3, 4]);
    expect(parseV6('1::2::3')).toBeNull();
    expect(parseV6('1:2:3')).toBeNull();
  });
});

/** An injected DNS: names map to address lists; an unknown name fails like getaddrinfo. */
function fakeDns(names: Record<string, string[]>): OutboundLookup {
  return async (host) => {
    const addresses = names[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

const refusedAs = (failure: string, message: string | RegExp) =>
  expect.objectContaining({ name: 'OutboundError', failure, message: typeof message === 'string' ? message : expect.stringMatching(message) });

describe('the outbound policy', () => {
  const names: Record<string, string[]> = {
    'internal.example': ['10.0.0.7'],
    'public.example': ['93.184.216.34'],
    'mixed.example': ['93.184.216.34', '127.0.0.1'],
    'v6.example': ['::ffff:169.254.169.254'],
    'lab.example': ['127.0.0.1'],
    'in-range.example': ['10.1.2.3', '::ffff:10.1.2.4'],
  };
  const policy = createOutboundPolicy({ allowHosts: ['lab.example', '[::1]', '10.1.0.0/16'], lookup: fakeDns(names) });
  const none = createOutboundPolicy({ lookup: fakeDns(names) });

  it('requires https unless the target is allow-listed', () => {
    expect(() => checkOutboundUrl(none, 'http://public.example/hook')).toThrow(/only https:\/\/ URLs are allowed/);
    expect(() => checkOutboundUrl(none, 'ftp://public.example/hook')).toThrow(/only https/);
    expect(() => checkOutboundUrl(none, 'not a url')).toThrow('is not an absolute URL');
    expect(() => checkOutboundUrl(none, 'https://user:pw@public.example/')).toThrow('must not contain a user name or password');
    expect(checkOutboundUrl(none, 'https://public.example/hook').href).toBe('https://public.example/hook');
    expect(() => checkOutboundUrl(policy, 'http://lab.example:8080/hook')).not.toThrow();
    expect(() => checkOutboundUrl(policy, 'http://[::1]:8080/hook')).not.toThrow();
    expect(() => checkOutboundUrl(policy, 'http://10.1.9.9/hook')).not.toThrow();
    expect(() => checkOutboundUrl(policy, 'http://10.2.9.9/hook')).toThrow(/not allowed \(10\.2\.9\.9 is a private address\)/);
  });

  it('refuses every form of the metadata address and of loopback in a URL (issue 20)', () => {
    for (const url of [
      'https://169.254.169.254/latest/meta-data',
      'https://[::ffff:169.254.169.254]/',
      'https://[::ffff:a9fe:a9fe]/',
      'https://[0:0:0:0:0:ffff:a9fe:a9fe]/',
      'https://[64:ff9b::a9fe:a9fe]/',
      'https://[2002:a9fe:a9fe::]/',
      'https://[::a9fe:a9fe]/',
      'https://[::ffff:0.0.0.0]/',
      'https://0.0.0.0/',
      'https://127.0.0.1/',
      'https://2130706433/',
      'https://0x7f.1/',
      'https://[::1]/',
    ]) {
      expect(() => checkOutboundUrl(none, url), url).toThrow(/^the address is not allowed \(.+ is an? .+ address\)$/);
    }
    expect(() => checkOutboundUrl(none, 'https://2130706433/')).toThrow('the address is not allowed (127.0.0.1 is a loopback address)');
  });

  it('resolves a name once and refuses it when any of its addresses is refused', async () => {
    await expect(resolveOutbound(none, 'public.example')).resolves.toEqual({ hostname: 'public.example', address: '93.184.216.34', family: 4, allowListed: false });
    await expect(resolveOutbound(none, 'internal.example')).rejects.toThrow('the address is not allowed (internal.example resolves to a private address)');
    await expect(resolveOutbound(none, 'mixed.example')).rejects.toThrow('the address is not allowed (mixed.example resolves to a loopback address)');
    await expect(resolveOutbound(none, 'v6.example')).rejects.toThrow(/IPv4-mapped link-local/);
    await expect(resolveOutbound(none, 'nowhere.example')).rejects.toEqual(refusedAs('unresolvable', 'cannot resolve nowhere.example'));
  });

  it('lets the allow-list through: names whatever they resolve to, ranges (mapped forms too), http only then', async () => {
    await expect(resolveOutbound(policy, 'lab.example', 'http:')).resolves.toMatchObject({ address: '127.0.0.1', allowListed: true });
    await expect(resolveOutbound(policy, 'LAB.example.')).resolves.toMatchObject({ allowListed: true });
    await expect(resolveOutbound(policy, 'in-range.example', 'http:')).resolves.toMatchObject({ address: '10.1.2.3', allowListed: true });
    await expect(resolveOutbound(policy, 'public.example', 'http:')).rejects.toThrow(/only https/);
    await expect(resolveOutbound(policy, 'internal.example')).rejects.toThrow(/private/);
  });

  it('checks a URL a tenant saves: an https name that does not resolve now passes, an http one does not', async () => {
    await expect(checkOutboundTarget(none, 'https://nowhere.example/x')).resolves.toBeInstanceOf(URL);
    await expect(checkOutboundTarget(policy, 'http://nowhere.example/x')).rejects.toThrow(/only https/);
    await expect(checkOutboundTarget(none, 'https://internal.example/x')).rejects.toThrow(/private/);
  });

  it('gives up on a lookup that does not answer', async () => {
    const slow = createOutboundPolicy({ lookup: () => new Promise(() => undefined), lookupTimeoutMs: 50 });
    await expect(resolveOutbound(slow, 'slow.example')).rejects.toEqual(refusedAs('unresolvable', 'cannot resolve slow.example'));
  });

  it('reads CONTROLGRAPH_OUTBOUND_ALLOW_HOSTS and its deprecated aliases into one list, refusing bad entries', () => {
    expect(
      allowHostsFromEnv({
        CONTROLGRAPH_OUTBOUND_ALLOW_HOSTS: ' idp.lab , 10.0.0.0/8',
        CONTROLGRAPH_WEBHOOK_ALLOW_HOSTS: '127.0.0.1,IDP.lab',
        CONTROLGRAPH_SSO_ALLOW_INSECURE_HOSTS: 'keycloak.internal',
      }),
    ).toEqual(['idp.lab', '10.0.0.0/8', '127.0.0.1', 'keycloak.internal']);
    expect(() => allowHostsFromEnv({ CONTROLGRAPH_OUTBOUND_ALLOW_HOSTS: '10.0.0.0/33' })).toThrow(
      'CONTROLGRAPH_OUTBOUND_ALLOW_HOSTS: "10.0.0.0/33" is not a host name, an IP address or a CIDR range',
    );
    expect(() => allowHostsFromEnv({ CONTROLGRAPH_WEBHOOK_ALLOW_HOSTS: 'http://x' })).toThrow(/^CONTROLGRAPH_WEBHOOK_ALLOW_HOSTS: /);
  });
});

interface Listener {
  port: number;
  hits: string[];
  connections: number;
  close(): Promise<void>;
}

/** An HTTP server on a loopback address that records what reached it. */
async function httpListener(host: string, handler: http.RequestListener = (_req, res) => res.end('ok'), port = 0): Promise<Listener> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.headers.host}${req.url}`);
    handler(req, res);
  });
  const listener = {
    port: 0,
    hits,
    connections: 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server.on('connection', () => listener.connections++);
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  listener.port = (server.address() as AddressInfo).port;
  return listener;
}

/** A TCP server that is not HTTP: it writes a banner and closes (an SSH port, say), or says nothing at all. */
async function tcpListener(banner: string | null): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    if (banner !== null) socket.end(banner);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('outboundFetch', () => {
  // 127.0.0.2 plays a public address (allow-listed); 127.0.0.1 plays the private one an attacker wants.
  let publicSide: Listener;
  let privateSide: Listener;

  beforeAll(async () => {
    publicSide = await httpListener('127.0.0.2', (req, res) => {
      if (req.url?.startsWith('/redirect')) {
        res.writeHead(302, { location: new URL(req.url, 'http://x').searchParams.get('to')! }).end();
      } else res.end('public');
    });
    // The same port on the address a rebinding attacker points the name to.
    privateSide = await httpListener('127.0.0.1', (_req, res) => res.end('private'), publicSide.port);
  });
  afterAll(async () => {
    await publicSide.close();
    await privateSide.close();
  });

  it('connects to the address it checked: a lookup answering public, then private, never reaches the second', async () => {
    let lookups = 0;
    const policy = createOutboundPolicy({
      allowHosts: ['127.0.0.2'],
      lookup: async () => [{ address: lookups++ === 0 ? '127.0.0.2' : '127.0.0.1', family: 4 }],
    });
    const response = await outboundFetch(policy, `http://rebind.test:${publicSide.port}/x`);
    expect(await response.text()).toBe('public');
    expect(lookups).toBe(1);
    // The next connection resolves again and is checked again: the private answer is refused.
    const again = outboundFetch(
      createOutboundPolicy({ ...policyOptions(policy), lookup: async () => [{ address: '127.0.0.1', family: 4 }] }),
      `http://rebind.test:${publicSide.port}/x`,
    );
    await expect(again).rejects.toEqual(refusedAs('refused', /only https|not allowed/));
    expect(privateSide.hits).toEqual([]);
    expect(privateSide.connections).toBe(0);
    expect(publicSide.hits).toContain(`GET rebind.test:${publicSide.port}/x`);
  });

  it('checks every redirect: one to a private address or name is refused before connecting', async () => {
    const policy = createOutboundPolicy({ allowHosts: ['127.0.0.2'], lookup: fakeDns({ 'inside.test': ['127.0.0.1'] }) });
    for (const to of [
      `http://127.0.0.1:${privateSide.port}/secret`,
      `https://127.0.0.1:${privateSide.port}/secret`,
      `https://inside.test:${privateSide.port}/secret`,
      `https://[::ffff:7f00:1]:${privateSide.port}/`,
    ]) {
      const redirected = outboundFetch(policy, `http://127.0.0.2:${publicSide.port}/redirect?to=${encodeURIComponent(to)}`);
      await expect(redirected, to).rejects.toEqual(refusedAs('refused', /only https|not allowed/));
    }
    expect(privateSide.connections).toBe(0);
    // Followed when allowed, at most maxRedirects times; 'manual' returns the 302 itself.
    const ok = await outboundFetch(policy, `http://127.0.0.2:${publicSide.port}/redirect?to=/final`);
    expect([ok.status, await ok.text()]).toEqual([200, 'public']);
    const loop = `http://127.0.0.2:${publicSide.port}/redirect?to=${encodeURIComponent(`/redirect?to=/redirect%3Fto%3D/redirect%253Fto%253D/redirect`)}`;
    await expect(outboundFetch(policy, loop, { maxRedirects: 2 })).rejects.toEqual(refusedAs('redirects', 'redirected more than 2 times'));
    const manual = await outboundFetch(policy, `http://127.0.0.2:${publicSide.port}/redirect?to=/final`, { redirect: 'manual' });
    expect(manual.status).toBe(302);
  });

  it('reads the same for a closed port, a port that is not HTTP and a silent one: no port state in messages', async () => {
    const logged: Array<Record<string, unknown>> = [];
    const policy = createOutboundPolicy({ allowHosts: ['127.0.0.1'], log: { info: (details) => logged.push(details as Record<string, unknown>) } });
    const banner = await tcpListener('SSH-2.0-OpenSSH_9.6\r\n');
    const silent = await tcpListener(null);
    try {
      const messages = new Set<string>();
      for (const port of [await closedPort(), banner.port, silent.port]) {
        const error = await outboundFetch(policy, `http://127.0.0.1:${port}/metadata`, { timeoutMs: 500 }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OutboundError);
        expect((error as OutboundError).failure).toBe('no_response');
        messages.add((error as OutboundError).message);
      }
      expect([...messages]).toEqual(['no HTTP response within 0.5 s']);
      // The cause stays with the operator: in the service log, not in the message.
      expect(logged.map((entry) => entry.detail)).toEqual([expect.stringMatching(/ECONNREFUSED/), expect.stringMatching(/HTTP/), expect.stringMatching(/abort|timeout/i)]);
    } finally {
      await banner.close();
      await silent.close();
    }
    // Not allow-listed: the address class is named, whatever listens there.
    await expect(outboundFetch(createOutboundPolicy(), `https://127.0.0.1:${await closedPort()}/`)).rejects.toThrow('the address is not allowed (127.0.0.1 is a loopback address)');
  });

  it('limits what it reads', async () => {
    const policy = createOutboundPolicy({ allowHosts: ['127.0.0.2'] });
    const response = await outboundFetch(policy, `http://127.0.0.2:${publicSide.port}/x`);
    await expect(readLimited(response, 3)).rejects.toEqual(refusedAs('too_large', 'is larger than 3 bytes'));
    expect((await readLimited(await outboundFetch(policy, `http://127.0.0.2:${publicSide.port}/x`), 100)).toString()).toBe('public');
  });

  it('gives openid-client a fetch that refuses what the policy refuses (the token endpoint of a discovery document)', async () => {
    const policy = createOutboundPolicy({ allowHosts: ['127.0.0.1'] });
    const fetcher = openidFetch(policy);
    const post = fetcher(`http://0.0.0.0:${privateSide.port}/token`, {
      method: 'POST',
      headers: { authorization: 'Basic c2VjcmV0' },
      body: 'grant_type=authorization_code',
      redirect: 'manual',
    } as never);
    await expect(post).rejects.toThrow(/the address is not allowed \(0\.0\.0\.0 is an unspecified/);
    expect(privateSide.connections).toBe(0);
    const ok = await fetcher(`http://127.0.0.1:${privateSide.port}/.well-known/openid-configuration`, { method: 'GET', headers: {} });
    expect(await ok.text()).toBe('private');
  });
});

function policyOptions(policy: ReturnType<typeof createOutboundPolicy>) {
  return { allowHosts: policy.allowList.entries };
}
