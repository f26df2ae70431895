/** Types of build-console.mjs for the TypeScript callers (the browser tests' global setup). */
export function consoleSourceHash(): string;
export function buildConsoleIfStale(options?: { force?: boolean; quiet?: boolean }): Promise<boolean>;
export function cachedConsoleBuild(): Promise<string>;
