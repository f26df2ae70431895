import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import S3rver from 's3rver';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { FileArtifactStore } from '../../src/platform/artifacts/file-store.js';
import { S3ArtifactStore, parseS3Url } from '../../src/platform/artifacts/s3-store.js';
import { saveEnv } from '../harness/env.js';
import { openArtifactStore, type ArtifactStore } from '../../src/platform/artifacts/index.js';
import { ArtifactTooLargeError } from '../../src/platform/artifacts/store.js';

/** A stream of `size` bytes made in chunks, so no test holds a large file in memory either. */
function bytes(size: number, chunk = 64 * 1024): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= size) return this.push(null);
      const n = Math.min(chunk, size - sent);
      sent += n;
      this.push(Buffer.alloc(n, 97));
    },
  });
}

function contract(name: string, make: () => ArtifactStore) {
  describe(`${name} artifact store`, () => {
    it('puts, stats, gets and deletes a streamed artifact', async () => {
      const store = make();
      const put = await store.put('tenants/t1/exports/a.txt', Readable.from(['hello ', 'world']), { contentType: 'text/plain' });
      expect(put).toEqual({ key: 'tenants/t1/exports/a.txt', size: 11, sha256: 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9' });
      expect((await store.stat('tenants/t1/exports/a.txt'))?.size).toBe(11);
      expect(await text((await store.get('tenants/t1/exports/a.txt'))!)).toBe('hello world');
      await store.delete('tenants/t1/exports/a.txt');
      expect(await store.stat('tenants/t1/exports/a.txt')).toBeNull();
      expect(await store.get('tenants/t1/exports/a.txt')).toBeNull();
      await store.delete('tenants/t1/exports/a.txt');
    });

    it('streams a multi-part sized artifact (12 MiB)', async () => {
      const store = make();
      const put = await store.put('big/file.bin', bytes(12 * 1024 * 1024));
      expect(put.size).toBe(12 * 1024 * 1024);
      expect((await store.stat('big/file.bin'))?.size).toBe(12 * 1024 * 1024);
      let received = 0;
      for await (const chunk of (await store.get('big/file.bin'))!) received += (chunk as Buffer).length;
      expect(received).toBe(12 * 1024 * 1024);
    });

    it('refuses an artifact above maxBytes and keeps nothing of it', async () => {
      const store = make();
      await expect(store.put('limited/x.bin', bytes(300_000), { maxBytes: 100_000 })).rejects.toBeInstanceOf(ArtifactTooLargeError);
      expect(await store.stat('limited/x.bin')).toBeNull();
    });

    it('refuses keys that could escape the store', async () => {
      const store = make();
      await expect(store.put('../escape.txt', Readable.from(['x']))).rejects.toThrow(/invalid artifact key/);
      await expect(store.get('/abs/path')).rejects.toThrow(/invalid artifact key/);
    });

    it('reports itself available', async () => {
      expect(await make().check()).toBe(true);
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), 'cg-file-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
contract('file', () => new FileArtifactStore(dir));

describe('file store leaves no partial files behind', () => {
  it('removes the temporary file of a failed write', async () => {
    const store = new FileArtifactStore(dir);
    await expect(store.put('partial/p.bin', bytes(300_000), { maxBytes: 1000 })).rejects.toThrow();
    expect(readdirSync(join(dir, 'partial'))).toEqual([]);
  });

  it('sweeps the partial files of writers killed mid-write once they are old, and nothing else', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cg-file-sweep-'));
    try {
      const store = new FileArtifactStore(root);
      await store.put('tenants/t/exports/done.png', bytes(1000));
      mkdirSync(join(root, 'tenants', 't', 'exports'), { recursive: true });
      // What a SIGKILLed export leaves: its temporary file, never renamed.
      const abandoned = join(root, 'tenants', 't', 'exports', 'job.png.0a1b.partial');
      const live = join(root, 'tenants', 't', 'exports', 'job2.png.2c3d.partial');
      writeFileSync(abandoned, 'half a file');
      writeFileSync(live, 'being written');
      const now = new Date();
      const twoHoursAgo = new Date(now.getTime() - 2 * 3_600_000);
      utimesSync(abandoned, twoHoursAgo, twoHoursAgo);
      expect(await store.sweepAbandoned(now, 3_600_000)).toBe(1);
      expect(existsSync(abandoned)).toBe(false);
      expect(existsSync(live)).toBe(true);
      expect(await store.stat('tenants/t/exports/done.png')).toMatchObject({ size: 1000 });
      expect(await new FileArtifactStore(join(root, 'missing')).sweepAbandoned(now, 0)).toBe(0);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

// S3 over real HTTP on loopback, served by s3rver (an S3 implementation for tests).
const s3dir = mkdtempSync(join(tmpdir(), 'cg-s3rver-'));
let s3rver: S3rver;
let endpoint = '';
const restoreAws = saveEnv('AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY');
beforeAll(async () => {
  process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
  process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
  s3rver = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: s3dir, configureBuckets: [{ name: 'artifacts', configs: [] }] });
  const address = (await s3rver.run()) as AddressInfo;
  endpoint = `http://127.0.0.1:${address.port}`;
});
afterAll(async () => {
  restoreAws();
  await s3rver.close();
  rmSync(s3dir, { recursive: true, force: true });
});
contract('s3', () => openArtifactStore(`s3://artifacts/prefix?endpoint=${encodeURIComponent(endpoint)}&region=us-east-1`)!);

describe('s3 store', () => {
  it('parses the s3 URL', () => {
    expect(parseS3Url('s3://bucket/some/prefix?endpoint=http%3A%2F%2F127.0.0.1%3A9000&region=eu-west-1')).toEqual({
      bucket: 'bucket',
      endpoint: 'http://127.0.0.1:9000',
      region: 'eu-west-1',
      forcePathStyle: true,
      prefix: 'some/prefix',
    });
  });

  it('stores objects under the prefix, readable through a presigned GET', async () => {
    const client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true });
    const store = new S3ArtifactStore(parseS3Url(`s3://artifacts/pre?endpoint=${encodeURIComponent(endpoint)}`), client);
    await store.put('r/report.json', Readable.from(['{"ok":true}']), { contentType: 'application/json' });
    const url = await getSignedUrl(client, new GetObjectCommand({ Bucket: 'artifacts', Key: 'pre/r/report.json' }), { expiresIn: 60 });
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('{"ok":true}');
  });

  it('reports an unreachable bucket as unavailable', async () => {
    const store = openArtifactStore(`s3://missing-bucket?endpoint=${encodeURIComponent(endpoint)}`)!;
    expect(await store.check()).toBe(false);
  });
});

describe('artifact store selection', () => {
  it('none means no store', () => {
    expect(openArtifactStore('none')).toBeNull();
  });
  it('refuses an unknown scheme', () => {
    expect(() => openArtifactStore('ftp://x')).toThrow(/ARTIFACT_STORE must be/);
  });
});
