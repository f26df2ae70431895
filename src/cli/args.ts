/** Parses `--name value` and `--flag` options; unknown options are an error naming them. */
export function parseOptions(args: string[], known: { values: string[]; flags?: string[] }): { values: Record<string, string>; flags: Set<string>; positional: string[] } {
  const values: Record<string, string> = {};
  const flags = new Set<string>();
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const [name, inline] = arg.slice(2).split('=', 2) as [string, string | undefined];
    if (known.flags?.includes(name)) {
      flags.add(name);
    } else if (known.values.includes(name)) {
      const value = inline ?? args[++i];
      if (value === undefined || (inline === undefined && value.startsWith('--'))) throw new Error(`--${name} needs a value`);
      values[name] = value;
    } else {
      throw new Error(`unknown option --${name}`);
    }
  }
  return { values, flags, positional };
}
