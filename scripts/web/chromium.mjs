// Finding and starting the system's Chromium (Debian's `chromium` package, or CHROMIUM_PATH): the
// browser tests and the console benchmark drive it through playwright-core; no browser is downloaded.
import { existsSync } from 'node:fs';

export const CHROMIUM_MISSING = 'no Chromium found: install it with `apt-get install -y chromium` (Debian), or set CHROMIUM_PATH to a Chromium binary';

export function chromiumPath() {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  return candidates.find((path) => Boolean(path) && existsSync(path)) ?? null;
}

/** Flags that keep a headless Chromium off the network: it only talks to the loopback service under test. */
export const CHROMIUM_FLAGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-domain-reliability',
  '--metrics-recording-only',
];

export async function launchChromium() {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error(CHROMIUM_MISSING);
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath, args: CHROMIUM_FLAGS, headless: true });
}
