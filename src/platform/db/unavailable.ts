/**
 * Whether an error means the database cannot be reached right now (a restart, a failover, a network
 * cut) rather than that the request was wrong: such requests answer 503, so clients and load
 * balancers retry instead of reporting a server bug.
 */
const CONNECTION_MESSAGES = [
  'Connection terminated',
  'connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Connection terminated unexpectedly',
];
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    // SQLSTATE 08xxx connection exceptions, 57P01-57P03 admin shutdown / crash / cannot connect now.
    if (/^08[0-9A-Z]{3}$/.test(code) || /^57P0[123]$/.test(code)) return true;
    if (CONNECTION_CODES.has(code)) return true;
  }
  if (CONNECTION_MESSAGES.some((m) => error.message.includes(m))) return true;
  const cause = (error as { cause?: unknown }).cause;
  return cause !== undefined && cause !== error && isDatabaseUnavailable(cause);
}
