-- name: CreateConsoleSession :one
INSERT INTO console_sessions (token_hash, csrf_token, api_key_id, user_id, organization_id, created_at, last_seen_at,
                              expires_at, second_factor_pending)
VALUES (@token_hash, @csrf_token, @api_key_id, @user_id, @organization_id, @created_at, @last_seen_at,
        @expires_at, @second_factor_pending)
RETURNING id;

-- name: GetConsoleSession :one
-- A session not expired whose key is not revoked or whose user is not
-- disabled (a deleted user's sessions are deleted with it), with the role
-- and name of its key or user as they are now, and whether the user must
-- still turn on a second factor the organization requires.
SELECT console_sessions.id, console_sessions.csrf_token, console_sessions.api_key_id, console_sessions.user_id,
       console_sessions.organization_id, console_sessions.last_seen_at, console_sessions.expires_at,
       console_sessions.second_factor_pending,
       CAST(COALESCE(users.role, api_keys.role) AS TEXT) AS role,
       CAST(COALESCE(users.email, api_keys.name) AS TEXT) AS actor_name,
       CAST(CASE WHEN users.id IS NOT NULL AND users.totp_enabled = 0 AND organizations.require_totp = 1 THEN 1 ELSE 0 END AS BIGINT) AS totp_required
FROM console_sessions
JOIN organizations ON organizations.id = console_sessions.organization_id
LEFT JOIN api_keys ON api_keys.id = console_sessions.api_key_id
LEFT JOIN users ON users.id = console_sessions.user_id
WHERE console_sessions.token_hash = sqlc.arg(token_hash) AND console_sessions.expires_at > sqlc.arg(now)
  AND ((api_keys.id IS NOT NULL AND api_keys.revoked_at IS NULL) OR (users.id IS NOT NULL AND users.disabled = 0));

-- name: TouchConsoleSession :exec
UPDATE console_sessions SET last_seen_at = sqlc.arg(now), expires_at = sqlc.arg(expires_at)
WHERE id = sqlc.arg(id) AND last_seen_at <= sqlc.arg(stale_before);

-- name: DeleteConsoleSession :execrows
DELETE FROM console_sessions WHERE token_hash = @token_hash;

-- name: DeletePendingConsoleSession :one
-- Ends a session waiting for its second factor, returning what the full
-- session that replaces it needs.
DELETE FROM console_sessions
WHERE token_hash = sqlc.arg(token_hash) AND second_factor_pending = 1 AND expires_at > sqlc.arg(now)
RETURNING user_id, organization_id;

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
