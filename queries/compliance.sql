-- Compliance guard rails (API.md section 12): the suppression list, the
-- organization's policy and its change log, the placements the attempt cap
-- counts.

-- name: ActiveSuppression :one
-- The entry that suppresses number now, if any: one search of the unique
-- index, whatever the list's size.
SELECT id, source FROM suppressions
WHERE organization_id = @organization_id AND phone_number = @phone_number
  AND (expires_at IS NULL OR expires_at > @now);

-- name: ListSuppressions :many
SELECT * FROM suppressions
WHERE organization_id = @organization_id AND id > @after_id
ORDER BY id LIMIT CAST(@max_rows AS BIGINT);

-- name: FindSuppression :many
SELECT * FROM suppressions
WHERE organization_id = @organization_id AND phone_number = @phone_number AND id > @after_id;

-- name: DeleteSuppression :execrows
DELETE FROM suppressions WHERE id = @id AND organization_id = @organization_id;

-- name: GetCompliancePolicy :one
SELECT * FROM compliance_policies WHERE organization_id = @organization_id;

-- name: SaveCompliancePolicy :exec
INSERT INTO compliance_policies (organization_id, version, policy, updated_at) VALUES (@organization_id, @version, @policy, @updated_at)
ON CONFLICT (organization_id) DO UPDATE SET version = excluded.version, policy = excluded.policy, updated_at = excluded.updated_at;

-- name: InsertPolicyChange :exec
INSERT INTO compliance_policy_changes (organization_id, version, changed_at, api_key_id, changes) VALUES (@organization_id, @version, @changed_at, @api_key_id, @changes);

-- name: ListPolicyChanges :many
SELECT * FROM compliance_policy_changes
WHERE organization_id = @organization_id AND id < @before_id
ORDER BY id DESC LIMIT CAST(@max_rows AS BIGINT);

-- name: NumberCallsSince :many
-- The placements of a number after @since, oldest first: a range of the
-- primary key's (organization, number) prefix.
SELECT placed_at FROM number_calls
WHERE organization_id = @organization_id AND phone_number = @phone_number AND placed_at > @since
ORDER BY placed_at;

-- name: ForgetNumberCallsBefore :exec
DELETE FROM number_calls WHERE organization_id = @organization_id AND phone_number = @phone_number AND placed_at <= @before;

-- name: RecordNumberCall :exec
INSERT INTO number_calls (organization_id, phone_number, attempt_id, placed_at) VALUES (@organization_id, @phone_number, @attempt_id, @placed_at)
ON CONFLICT DO NOTHING;

-- name: ForgetNumberCall :exec
DELETE FROM number_calls WHERE organization_id = @organization_id AND phone_number = @phone_number AND attempt_id = @attempt_id;

-- name: SweepNumberCalls :execrows
DELETE FROM number_calls WHERE placed_at < @placed_at;

-- name: OrganizationOfCampaign :one
SELECT organization_id FROM campaigns WHERE id = @id;

-- name: AbandonedNumberAnswer :one
-- The answer of the newest abandoned call to a number of the organization
-- (the recall hold, API.md 19): one search of the primary key.
SELECT answered_at FROM abandoned_numbers
WHERE organization_id = @organization_id AND phone_number = @phone_number;

-- name: RecordAbandonedNumber :exec
-- Notes an abandoned call to a number; an older answer never replaces a
-- newer one.
INSERT INTO abandoned_numbers (organization_id, phone_number, answered_at, attempt_id)
VALUES (@organization_id, @phone_number, @answered_at, @attempt_id)
ON CONFLICT (organization_id, phone_number) DO UPDATE SET answered_at = excluded.answered_at, attempt_id = excluded.attempt_id
WHERE excluded.answered_at > abandoned_numbers.answered_at;

-- name: SweepAbandonedNumbers :execrows
DELETE FROM abandoned_numbers WHERE answered_at < @answered_at;
