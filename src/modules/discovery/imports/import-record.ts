import type { Readable } from 'node:stream';
import type { NodeRecord } from '../../graph/index.js';

/**
 * What every scanner importer produces (issue 27): the contract between the format parsers
 * (`prowler-ocsf.ts`, `asff.ts`, `sarif.ts`, `aws-config.ts`) and the import pipeline that turns
 * the records into graph nodes and findings. A parser knows its format and nothing of storage; the
 * pipeline knows storage and nothing of formats.
 */

/** The formats `POST /imports` accepts; `format` in the request names one, or it is detected. */
export const IMPORT_FORMATS = ['prowler-ocsf', 'prowler-asff', 'securityhub-asff', 'sarif', 'aws-config'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** Providers an imported resource can belong to; each becomes the node's `provider`. */
export type ImportProvider = 'aws' | 'azure' | 'gcp' | 'kubernetes' | 'm365' | 'github' | 'iac';

/** The resource a record is about, as the source names it. */
export interface ImportedResource {
  provider: ImportProvider;
  /** The source's unique id of the resource: an ARN, an Azure resource id, a GCP self link, a file path for IaC. */
  uid: string;
  /** Our node type when known (`aws_s3_bucket`, from an AWS Config type), otherwise the source's type (`AwsS3Bucket`). */
  type: string;
  name: string;
  /** The AWS account, Azure subscription, GCP project or Kubernetes cluster; '' when the source does not say. */
  account_id: string;
  /** '' or 'global' when the source gives none. */
  region: string;
  tags?: Record<string, string>;
}

/** Where in a file an IaC or code finding is (SARIF `physicalLocation`). */
export interface ImportedLocation {
  uri: string;
  start_line?: number;
  end_line?: number;
}

export type ImportedSeverity = 'critical' | 'high' | 'medium' | 'low' | 'info';

/** One result of a scanner's check on one resource. */
export interface ImportedFinding {
  kind: 'finding';
  /** `prowler`, `securityhub` (or the ASFF product: `guardduty`, `inspector`), the SARIF tool's name in lower case. */
  source: string;
  /** The source's check id (`s3_bucket_default_encryption`, `S3.1`, the SARIF ruleId). */
  check_id: string;
  /** The source's own id of this finding (OCSF `finding_info.uid`, ASFF `Id`, SARIF fingerprint or a digest of rule and location). */
  source_finding_id: string;
  /** fail: the check failed (a finding); pass: it passed (resolves an open finding); unknown: the source could not decide (manual, error, INFO). */
  status: 'fail' | 'pass' | 'unknown';
  severity: ImportedSeverity;
  /** States the failure ("S3 bucket x has no default encryption"), never the check's neutral name alone. */
  title: string;
  description: string;
  remediation: string;
  resource: ImportedResource;
  /**
   * Requirements the source itself maps the check to, by the source's framework names
   * (`{framework: 'CIS-1.4', requirement: '2.1.1'}`); the pipeline maps the names onto our catalogs.
   */
  requirements: Array<{ framework: string; requirement: string }>;
  location?: ImportedLocation;
  /** CVE ids the finding is about (Inspector and scanners of images). */
  cve_ids?: string[];
  /** Source fields worth keeping that have no column (kept on the finding's details). */
  details: Record<string, unknown>;
}

/** One resource as a configuration source states it (AWS Config): a node and its relationships. */
export interface ImportedNode {
  kind: 'node';
  /** In the graph's node shape (discovery/inventory.ts `awsNode`); the pipeline sets its source. */
  node: Omit<NodeRecord, 'source'>;
  /** Edges from this node, by the target's node id (the target may come later in the file, or be known already). */
  edges: Array<{ target: string; type: string }>;
}

/** A record that could not be read: the import goes on and lists it. */
export interface RecordError {
  kind: 'error';
  /** The record's position in the file, from 0. */
  record: number;
  message: string;
}

export type ImportItem = ImportedFinding | ImportedNode | RecordError;

/**
 * The file is not a document of the format at all (not JSON, cut off, no findings array): the
 * upload is refused with 400 and this message, which names the position (byte offset).
 */
export class MalformedImportError extends Error {
  override name = 'MalformedImportError';
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

export interface ImportParser {
  format: ImportFormat;
  /** True when the file's first bytes (up to 64 KiB, as text) look like this format. */
  detect(head: string): boolean;
  /**
   * The file's records, streamed: constant memory whatever the file's size. Throws
   * MalformedImportError for a document that is not of the format; a bad record is a RecordError
   * item and the import goes on.
   */
  parse(input: Readable): AsyncIterable<ImportItem>;
}
