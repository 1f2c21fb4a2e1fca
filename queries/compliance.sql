-- Compliance guard rails (API.md section 12): the suppression list, the
-- organization's policy and its change log, the placements the attempt cap
-- counts.

-- name: ActiveSuppression :one
-- The entry that suppresses number now, if any: one search of the unique
-- index, whatever the list's size.
SELECT id, source FROM suppressions
WHERE organization_id = @organization_id AND phone_number = @phone_number
  AND (expires_at IS NULL OR expires_at > @now);

-- name: ReviveSuppressions :execrows
-- Entries of the numbers (a JSON array) that expired are replaced by the new
-- ones: they count as added.
UPDATE suppressions SET reason = @reason, source = @source, created_at = @now, expires_at = sqlc.narg('expires_at')
WHERE organization_id = @organization_id AND expires_at IS NOT NULL AND expires_at <= @now
  AND phone_number IN (SELECT value FROM json_each(@numbers));

-- name: ExtendSuppressions :exec
-- Entries of the numbers that are active keep their id, source and reason
-- and expire at the later of the two times (never, when either never does).
UPDATE suppressions
SET expires_at = CASE WHEN sqlc.narg('expires_at') IS NULL THEN NULL ELSE max(expires_at, sqlc.narg('expires_at')) END
WHERE organization_id = @organization_id AND expires_at IS NOT NULL
  AND phone_number IN (SELECT value FROM json_each(@numbers));

-- name: InsertSuppressions :execrows
INSERT INTO suppressions (organization_id, phone_number, reason, source, created_at, expires_at)
SELECT @organization_id, j.value, @reason, @source, @now, sqlc.narg('expires_at') FROM json_each(@numbers) j WHERE true
ON CONFLICT (organization_id, phone_number) DO NOTHING;

-- name: ListSuppressions :many
SELECT * FROM suppressions
WHERE organization_id = @organization_id AND id > @after_id
ORDER BY id LIMIT CAST(@max_rows AS INTEGER);

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
ORDER BY id DESC LIMIT CAST(@max_rows AS INTEGER);

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
