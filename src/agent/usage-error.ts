/** A mistake in the invocation, the configuration or the key file: the CLI prints it (with the usage) and exits 2. */
export class UsageError extends Error {
  override name = 'UsageError';
  readonly exitCode = 2;
}
