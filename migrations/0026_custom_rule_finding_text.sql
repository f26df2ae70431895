-- A finding says what is wrong (issue 22): a rule's own title states the desired state ("S3 bucket has
-- versioning enabled") and is what rule listings show; its findings carry a failure wording instead.
-- A custom rule may set its own; without one (NULL) the service generates "Fails: <title>".
ALTER TABLE custom_rules
  ADD COLUMN finding_title text,
  ADD COLUMN finding_description text;
