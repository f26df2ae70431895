#!/usr/bin/env node
// Runs the compiled CLI (npm ci builds it through the prepare script).
import { main } from '../dist/main.js';

main(process.argv.slice(2)).catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
