import type { ImportFormat, ImportParser } from './import-record.js';
import { prowlerOcsfParser } from './prowler-ocsf.js';
import { prowlerAsffParser, securityHubAsffParser } from './asff.js';
import { sarifParser } from './sarif.js';
import { awsConfigParser } from './aws-config.js';

/** The parsers by format: one line per parser (the others are added as they land). */
const PARSERS: Partial<Record<ImportFormat, ImportParser>> = {
  'prowler-ocsf': prowlerOcsfParser,
  'prowler-asff': prowlerAsffParser,
  'securityhub-asff': securityHubAsffParser,
  sarif: sarifParser,
  'aws-config': awsConfigParser,
};

/** How much of a file detection looks at. */
export const DETECT_HEAD_BYTES = 64 * 1024;

export function parserFor(format: ImportFormat): ImportParser | null {
  return PARSERS[format] ?? null;
}

/** The formats this build can read. */
export function supportedFormats(): ImportFormat[] {
  return Object.keys(PARSERS) as ImportFormat[];
}

/** The first parser that recognises the file's head, or null. */
export function detectFormat(head: string): ImportFormat | null {
  for (const parser of Object.values(PARSERS)) if (parser.detect(head)) return parser.format;
  return null;
}
