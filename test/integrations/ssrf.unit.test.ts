import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createTargetGuard, parseV6, refusalOf, TargetRefused, TargetUnresolvable } from '../../src/modules/integrations/ssrf.js';
import { createHttpClient } from '../../src/modules/integrations/http-client.js';

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
  ])('%s is %s', (address, reason) => {
    expect(refusalOf(address)).toBe(reason);
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '169.255.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:0808:0808::1'])('%s is public', (address) => {
    expect(refusalOf(address)).toBeNull();
  });

  it('parses IPv6 forms', () => {
    expect(parseV6('::1')).toEqual([...Array(15).fill(0), 1]);
    expect(parseV6('1:2:3:4:5:6:7:8')).toEqual([0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8]);
    expect(parseV6('::ffff:1.2.3.4')?.slice(10)).toEqual([0xff, 0xff, 1, 2, 3, 4]);
    expect(parseV6('1::2::3')).toBeNull();
    expect(parseV6('1:2:3')).toBeNull();
  });
});

describe('the target guard', () => {
  const names: Record<string, string[]> = {
    'internal.example': ['10.0.0.7'],
    'public.example': ['93.184.216.34'],
    'mixed.example': ['93.184.216.34', '127.0.0.1'],
    'v6.example': ['::ffff:169.254.169.254'],
    'lab.example': ['127.0.0.1'],
  };
  const lookup = async (host: string) => {
    const addresses = names[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  const guard = createTargetGuard({ allowHosts: ['lab.example', '[::1]'], lookup });

  it('requires https unless the host is allow-listed', () => {
    expect(() => guard.checkUrl(new URL('http://public.example/hook'))).toThrow(TargetRefused);
    expect(() => guard.checkUrl(new URL('ftp://public.example/hook'))).toThrow(/only https/);
    expect(() => guard.checkUrl(new URL('https://public.example/hook'))).not.toThrow();
    expect(() => guard.checkUrl(new URL('http://lab.example:8080/hook'))).not.toThrow();
    expect(() => guard.checkUrl(new URL('http://[::1]:8080/hook'))).not.toThrow();
  });

  it('refuses literal private addresses in URLs (WHATWG-normalised IPv4 forms too)', () => {
    expect(() => guard.checkUrl(new URL('https://127.0.0.1/'))).toThrow('127.0.0.1 is a loopback address');
    expect(() => guard.checkUrl(new URL('https://2130706433/'))).toThrow('127.0.0.1 is a loopback address');
    expect(() => guard.checkUrl(new URL('https://0x7f.1/'))).toThrow('127.0.0.1 is a loopback address');
    expect(() => guard.checkUrl(new URL('https://[::ffff:127.0.0.1]/'))).toThrow(/IPv4-mapped loopback/);
    expect(() => guard.checkUrl(new URL('https://169.254.169.254/latest/meta-data'))).toThrow('link-local');
  });

  it('resolves names and refuses those resolving to refused addresses (every address must pass)', async () => {
    await expect(guard.resolve('public.example')).resolves.toEqual({ hostname: 'public.example', address: '93.184.216.34', family: 4, allowListed: false });
    await expect(guard.resolve('internal.example')).rejects.toThrow('internal.example resolves to 10.0.0.7, a private address');
    await expect(guard.resolve('mixed.example')).rejects.toThrow('mixed.example resolves to 127.0.0.1, a loopback address');
    await expect(guard.resolve('v6.example')).rejects.toThrow(/IPv4-mapped link-local/);
    await expect(guard.resolve('nowhere.example')).rejects.toThrow(TargetUnresolvable);
  });

  it('lets allow-listed hosts resolve to anything', async () => {
    await expect(guard.resolve('lab.example')).resolves.toMatchObject({ address: '127.0.0.1', allowListed: true });
    await expect(guard.resolve('LAB.example')).resolves.toMatchObject({ allowListed: true });
  });

  it('gives up on a lookup that does not answer', async () => {
    const slow = createTargetGuard({ allowHosts: [], lookup: () => new Promise(() => undefined), lookupTimeoutMs: 50 });
    await expect(slow.resolve('slow.example')).rejects.toThrow('cannot resolve slow.example: timed out');
  });

  it('connects to the address the guard checked, not to a second lookup of the name', async () => {
    // rebind.test exists only in the guard's lookup: a request that resolved the name again would fail.
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      seen.push(`${req.headers.host}`);
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      let lookups = 0;
      const client = createHttpClient({
        guard: createTargetGuard({ allowHosts: ['rebind.test'], lookup: async () => (lookups++ === 0 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '10.9.9.9', family: 4 }]) }),
        userAgent: 'test',
        bodyLimit: 100,
      });
      const outcome = await client.send({ url: `http://rebind.test:${port}/x`, headers: {}, body: '{}', timeoutMs: 2_000 });
      expect(outcome).toMatchObject({ status: 200, body: 'ok', error: null });
      expect(seen).toEqual([`rebind.test:${port}`]);
      expect(lookups).toBe(1);
      client.close();
    } finally {
      server.close();
    }
  });
});
