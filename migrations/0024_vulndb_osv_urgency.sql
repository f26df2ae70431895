-- The distribution's own rating of an advisory for one affected package (OSV
-- affected[].ecosystem_specific.urgency: Debian's "low", "medium", "high", "unimportant", ...).
-- The host agent's CVE findings take their severity from it when no CVSS score is known. Records
-- imported before this column fill it when their advisory is imported again with another content.
ALTER TABLE vulndb_osv_affected ADD COLUMN urgency text;
ALTER TABLE vulndb_osv_affected_stage ADD COLUMN urgency text;
