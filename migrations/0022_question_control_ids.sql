-- Questions keep their control mappings as the client wrote them (`NIST-PE-3` stays `NIST-PE-3`)
-- and carry the normalised ids beside them in `control_ids` (`nist-800-53:PE-3`), which attestation,
-- scores and POA&M items use (issue 21 item 2).
--
-- Rows written before this migration stored only the normalised form: the client's original text
-- was not kept and cannot be recovered. Their `control_ids` are copied from `control_mappings`, so
-- for these old questions both fields read in the normalised form. Questions that already have
-- `control_ids` are left as they are.
UPDATE questionnaires
SET questions = (
  SELECT jsonb_agg(
    CASE WHEN q ? 'control_ids' THEN q ELSE q || jsonb_build_object('control_ids', coalesce(q -> 'control_mappings', '[]'::jsonb)) END
    ORDER BY position
  )
  FROM jsonb_array_elements(questions) WITH ORDINALITY AS e (q, position)
)
WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(questions) q WHERE NOT q ? 'control_ids');
