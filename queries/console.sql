-- name: CreateConsoleSession :one
INSERT INTO console_sessions (token_hash, csrf_token, api_key_id, organization_id, created_at, last_seen_at, expires_at)
VALUES (@token_hash, @csrf_token, @api_key_id, @organization_id, @created_at, @last_seen_at, @expires_at)
RETURNING id;

-- name: GetConsoleSession :one
SELECT console_sessions.id, console_sessions.csrf_token, console_sessions.api_key_id,
       console_sessions.organization_id, console_sessions.last_seen_at, console_sessions.expires_at
FROM console_sessions JOIN api_keys ON api_keys.id = console_sessions.api_key_id
WHERE console_sessions.token_hash = sqlc.arg(token_hash) AND console_sessions.expires_at > sqlc.arg(now)
  AND api_keys.revoked_at IS NULL;

-- name: TouchConsoleSession :exec
UPDATE console_sessions SET last_seen_at = sqlc.arg(now), expires_at = sqlc.arg(expires_at)
WHERE id = sqlc.arg(id) AND last_seen_at <= sqlc.arg(stale_before);

-- name: DeleteConsoleSession :execrows
DELETE FROM console_sessions WHERE token_hash = @token_hash;

-- name: DeleteExpiredConsoleSessions :execrows
DELETE FROM console_sessions WHERE expires_at <= @expires_at;

-- name: CreateSignInLink :exec
INSERT INTO console_sign_in_links (token_hash, api_key_id, organization_id, created_at, expires_at)
VALUES (@token_hash, @api_key_id, @organization_id, @created_at, @expires_at);

-- name: RedeemSignInLink :one
UPDATE console_sign_in_links SET used_at = sqlc.arg(now)
WHERE token_hash = sqlc.arg(token_hash) AND used_at IS NULL AND expires_at > sqlc.arg(now)
  AND api_key_id IN (SELECT api_keys.id FROM api_keys WHERE api_keys.revoked_at IS NULL)
RETURNING api_key_id, organization_id;

-- name: DeleteExpiredSignInLinks :execrows
DELETE FROM console_sign_in_links WHERE expires_at <= @expires_at;

