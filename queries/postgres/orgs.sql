-- PostgreSQL queries of orgs.sql that differ between dialects (see sqlc.yaml).

-- name: LiveAPIKeyIDs :many
-- Of the keys ids, those not revoked (an event stream's credential check).
SELECT id FROM api_keys WHERE revoked_at IS NULL AND id = ANY (CAST(sqlc.arg('ids') AS BIGINT[]));

-- name: LockOrganization :one
-- Serializes the organization's limit-checked writes (count, then insert)
-- across nodes: the row lock is held until the transaction ends, so a
-- second writer counts after the first committed.
SELECT id FROM organizations WHERE id = @id FOR UPDATE;
