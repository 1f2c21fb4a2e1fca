-- The people of an organization (API.md 17): users, the links that set
-- their passwords, their second factor's recovery codes. Times are unix
-- milliseconds.

-- name: CreateUser :one
-- No row when a user (of any organization) has the email.
INSERT INTO users (organization_id, email, email_key, role, created_at, updated_at)
VALUES (@organization_id, @email, @email_key, @role, @created_at, @created_at)
ON CONFLICT (email_key) DO NOTHING RETURNING *;

-- name: ListUsers :many
SELECT * FROM users WHERE organization_id = @organization_id ORDER BY id;

-- name: GetUser :one
SELECT * FROM users WHERE id = @id AND organization_id = @organization_id;

-- name: GetUserByID :one
SELECT * FROM users WHERE id = @id;

-- name: UpdateUser :one
-- Sets the fields given (not NULL): two changes at once to different
-- fields both hold.
UPDATE users SET role = COALESCE(sqlc.narg(role), role), disabled = COALESCE(sqlc.narg(disabled), disabled),
                 updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id) AND organization_id = sqlc.arg(organization_id) RETURNING *;

-- name: DeleteUser :execrows
DELETE FROM users WHERE id = @id AND organization_id = @organization_id;

-- name: DeleteUserSessions :execrows
DELETE FROM console_sessions WHERE user_id = @user_id;

-- name: SetUserPassword :execrows
UPDATE users SET password_hash = @password_hash, updated_at = @updated_at WHERE id = @id;

-- name: UserForSignIn :one
SELECT users.*, organizations.require_totp
FROM users JOIN organizations ON organizations.id = users.organization_id
WHERE users.email_key = @email_key;

-- name: SetTOTPPending :execrows
UPDATE users SET totp_pending = @totp_pending, updated_at = @updated_at WHERE id = @id;

-- name: EnableTOTP :execrows
UPDATE users SET totp_secret = @totp_secret, totp_pending = NULL, totp_enabled = 1, totp_last_step = 0,
                 updated_at = @updated_at
WHERE id = @id;

-- name: DisableTOTP :execrows
UPDATE users SET totp_secret = NULL, totp_pending = NULL, totp_enabled = 0, totp_last_step = 0, updated_at = @updated_at
WHERE id = @id;

-- name: UseTOTPStep :execrows
-- Accepts a TOTP code's time step only when it is later than the last one
-- accepted: of two requests with the same code (on two nodes), one
-- updates the row and the other finds the condition false.
UPDATE users SET totp_last_step = @step WHERE id = @id AND totp_enabled = 1 AND totp_last_step < @step;

-- name: DeleteRecoveryCodes :exec
DELETE FROM recovery_codes WHERE user_id = @user_id;

-- name: InsertRecoveryCode :exec
INSERT INTO recovery_codes (user_id, code_hash) VALUES (@user_id, @code_hash) ON CONFLICT DO NOTHING;

-- name: UseRecoveryCode :execrows
DELETE FROM recovery_codes WHERE user_id = @user_id AND code_hash = @code_hash;

-- name: CountRecoveryCodes :one
SELECT count(*) FROM recovery_codes WHERE user_id = @user_id;

-- name: CreatePasswordLink :exec
INSERT INTO password_links (token_hash, user_id, created_at, expires_at)
VALUES (@token_hash, @user_id, @created_at, @expires_at);

-- name: GetPasswordLink :one
SELECT * FROM password_links WHERE token_hash = @token_hash;

-- name: UsePasswordLink :one
UPDATE password_links SET used_at = sqlc.arg(now)
WHERE token_hash = sqlc.arg(token_hash) AND used_at IS NULL AND expires_at > sqlc.arg(now)
RETURNING user_id;

-- name: SweepPasswordLinks :execrows
DELETE FROM password_links WHERE expires_at <= @expires_at;

-- name: InsertSignInFailure :exec
INSERT INTO sign_in_failures (email_key, address, at) VALUES (@email_key, @address, @at);

-- name: SignInFailuresByEmail :many
SELECT at FROM sign_in_failures WHERE email_key = @email_key AND at > @since ORDER BY at;

-- name: SignInFailuresByAddress :many
SELECT at FROM sign_in_failures WHERE address = @address AND at > @since ORDER BY at;

-- name: SweepSignInFailures :execrows
DELETE FROM sign_in_failures WHERE at <= @at;
