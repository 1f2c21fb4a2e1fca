-- SQLite queries of compliance.sql that differ between dialects (see sqlc.yaml).

-- name: ExtendSuppressions :exec
-- Entries of the numbers that are active keep their id, source and reason
-- and expire at the later of the two times (never, when either never does).
UPDATE suppressions
SET expires_at = CASE WHEN CAST(sqlc.narg('expires_at') AS BIGINT) IS NULL THEN NULL ELSE max(expires_at, CAST(sqlc.narg('expires_at') AS BIGINT)) END
WHERE organization_id = @organization_id AND expires_at IS NOT NULL
  AND phone_number IN (SELECT value FROM json_each(CAST(@numbers AS TEXT)));

-- name: InsertSuppressions :execrows
INSERT INTO suppressions (organization_id, phone_number, reason, source, created_at, expires_at)
SELECT @organization_id, j.value, @reason, @source, @now, CAST(sqlc.narg('expires_at') AS BIGINT) FROM json_each(CAST(@numbers AS TEXT)) j WHERE true
ON CONFLICT (organization_id, phone_number) DO NOTHING;

-- name: ReviveSuppressions :execrows
-- Entries of the numbers (a JSON array) that expired are replaced by the new
-- ones: they count as added.
UPDATE suppressions SET reason = @reason, source = @source, created_at = @now, expires_at = sqlc.narg('expires_at')
WHERE organization_id = @organization_id AND expires_at IS NOT NULL AND expires_at <= @now
  AND phone_number IN (SELECT value FROM json_each(CAST(@numbers AS TEXT)));

