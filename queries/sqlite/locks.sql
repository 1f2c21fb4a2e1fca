-- SQLite queries of the store's locks (store/locks.go; see
-- queries/postgres/locks.sql). SQLite runs one write transaction at a time
-- (IMMEDIATE, on every store's writer of the file), so the locks are
-- already held: these read the row they name, or nothing, and cost a few
-- microseconds.

-- name: LockOrganization :one
SELECT id FROM organizations WHERE id = @id;

-- name: LockCampaign :one
SELECT id FROM campaigns WHERE id = @id;

-- name: LockAttempt :one
SELECT * FROM call_attempts WHERE id = @id;

-- name: LockKey :exec
SELECT CAST(@key AS TEXT);
