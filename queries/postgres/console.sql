-- PostgreSQL queries of console.sql that differ between dialects (see sqlc.yaml).

-- name: LiveConsoleSessionIDs :many
-- Of the sessions ids, those not expired at now whose key is not revoked
-- or whose user is not disabled
-- (an event stream's credential check; the conditions of GetConsoleSession).
SELECT console_sessions.id
FROM console_sessions
LEFT JOIN api_keys ON api_keys.id = console_sessions.api_key_id
LEFT JOIN users ON users.id = console_sessions.user_id
WHERE console_sessions.expires_at > sqlc.arg(now)
  AND ((api_keys.id IS NOT NULL AND api_keys.revoked_at IS NULL) OR (users.id IS NOT NULL AND users.disabled = 0))
  AND console_sessions.id = ANY (CAST(sqlc.arg('ids') AS BIGINT[]));
