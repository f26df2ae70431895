#!/usr/bin/env node
// Runs the compiled CLI (npm ci builds it through the prepare script).
import { main } from '../dist/main.js';

main(process.argv.slice(2)).catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  // An error may carry its exit status (2: refused, e.g. the embedded database is in use); else 1.
  process.exit(Number.isInteger(error?.exitCode) ? error.exitCode : 1);
});
