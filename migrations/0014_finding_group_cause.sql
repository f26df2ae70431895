-- Root-cause groups are the rule plus its cause (a rule's group_by: the resource itself, a property
-- of it or the node at the other end of one of its edges), no longer always the account and region.
-- The audit recomputes each finding's group_id and group_cause whenever it sees the violation again,
-- so existing findings move to their cause's group at the next audit: no backfill here.

-- The cause a finding's group is named by ("security group sg-123"); NULL when the rule has no cause
-- for the resource and the group is the rule in the account and region.
ALTER TABLE findings ADD COLUMN group_cause text;

-- group_by of a custom rule ({cause, self | path | edge, node_type?}); NULL for none.
ALTER TABLE custom_rules ADD COLUMN group_by jsonb;
