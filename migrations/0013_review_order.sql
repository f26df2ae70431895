-- Reviews of one assessment keep the order they were made in, even when two share a timestamp
-- (a fixed clock, or two decisions within one millisecond): created_at alone cannot break that tie.
ALTER TABLE assessment_reviews ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
DROP INDEX assessment_reviews_assessment_idx;
CREATE INDEX assessment_reviews_assessment_idx ON assessment_reviews (assessment_id, seq);
