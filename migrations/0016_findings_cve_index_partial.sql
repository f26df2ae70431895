-- Only findings that name CVEs (agent package findings) are ever searched by cve_ids; audit findings
-- never name one. A GIN entry per finding regardless made every finding insert pay for it (about a
-- sixth of storing a first audit's findings): the index now holds only findings with CVEs, and the
-- escalation query states the same predicate so the planner can use it.
DROP INDEX findings_cve_idx;
CREATE INDEX findings_cve_idx ON findings USING gin (cve_ids) WHERE cardinality(cve_ids) > 0;
