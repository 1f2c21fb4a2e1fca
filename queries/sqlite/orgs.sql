-- SQLite queries of orgs.sql that differ between dialects (see sqlc.yaml).

-- name: LiveAPIKeyIDs :many
-- Of the keys ids, those not revoked (an event stream's credential check).
SELECT id FROM api_keys WHERE revoked_at IS NULL AND id IN (sqlc.slice('ids'));

-- name: LockOrganization :one
-- Serializes the organization's limit-checked writes (count, then insert)
-- on PostgreSQL; SQLite's single writer serializes every write already.
SELECT id FROM organizations WHERE id = @id;
