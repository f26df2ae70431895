/*
 * Its own file so that the table declarations (compliance/tables.ts) can name it without importing
 * control-state.ts, which imports the rule catalog, which imports the tables (a type cycle).
 */

/** A baseline as stored with an audit run: JSON without the NUL that joins a control key. */
export interface StoredBaseline {
  failing: Array<[framework: string, controlId: string]>;
  /** Absent in baselines stored before unknown outcomes existed (read as none). */
  unknown?: Array<[framework: string, controlId: string]>;
  scores: Record<string, number>;
  overall: number;
}
