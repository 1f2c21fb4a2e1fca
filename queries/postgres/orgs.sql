-- PostgreSQL queries of orgs.sql that differ between dialects (see sqlc.yaml).

-- name: LiveAPIKeyIDs :many
-- Of the keys ids, those not revoked (an event stream's credential check).
SELECT id FROM api_keys WHERE revoked_at IS NULL AND id = ANY (CAST(sqlc.arg('ids') AS BIGINT[]));
