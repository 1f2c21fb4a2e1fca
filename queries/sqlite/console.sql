-- SQLite queries of console.sql that differ between dialects (see sqlc.yaml).

-- name: LiveConsoleSessionIDs :many
-- Of the sessions ids, those not expired at now whose key is not revoked
-- (an event stream's credential check; the conditions of GetConsoleSession).
SELECT console_sessions.id
FROM console_sessions JOIN api_keys ON api_keys.id = console_sessions.api_key_id
WHERE console_sessions.expires_at > sqlc.arg(now) AND api_keys.revoked_at IS NULL
  AND console_sessions.id IN (sqlc.slice('ids'));
