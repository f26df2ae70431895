/** The system's Chromium for browser tests (scripts/web/chromium.mjs, shared with the console benchmark). */
export { chromiumPath, launchChromium } from '../../../scripts/web/chromium.mjs';
import { CHROMIUM_MISSING as MISSING } from '../../../scripts/web/chromium.mjs';

export const CHROMIUM_MISSING = `browser tests skipped: ${MISSING}.`;
