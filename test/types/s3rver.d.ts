// s3rver ships no types; the tests use its constructor, run(), close(), the server it listens with,
// and its account registry (to accept the key pairs a stubbed STS issues).
declare module 's3rver' {
  import type { AddressInfo } from 'node:net';
  import type { Server } from 'node:http';
  export default class S3rver {
    constructor(options: Record<string, unknown>);
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
    httpServer: Server;
  }
}

declare module 's3rver/lib/models/account.js' {
  interface AWSAccount {
    createKeyPair(accessKeyId: string, secretAccessKey: string): void;
    revokeAccessKey(accessKeyId: string): void;
  }
  const account: { DUMMY_ACCOUNT: AWSAccount };
  export default account;
}
