/** Types of chromium.mjs for the TypeScript callers (the browser tests). */
import type { Browser } from 'playwright-core';
export const CHROMIUM_MISSING: string;
export const CHROMIUM_FLAGS: string[];
export function chromiumPath(): string | null;
export function launchChromium(): Promise<Browser>;
