/**
 * Remembers the named environment variables now and returns what puts them back as they were.
 * Test files of one vitest worker share its process (isolate: false), so a file that sets a
 * variable restores it: the next file starts from the environment it would have had alone.
 */
export function saveEnv(...names: string[]): () => void {
  const saved = names.map((name) => [name, process.env[name]] as const);
  return () => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}
