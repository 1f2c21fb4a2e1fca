-- PostgreSQL queries of the store's locks (store/locks.go; SQLite's are
-- no-ops, queries/sqlite/locks.sql). Each lock is held until the
-- transaction ends, at its commit or rollback: no session state is left
-- behind (nodes work behind PgBouncer in transaction pooling). Row locks
-- are FOR NO KEY UPDATE, the lock an UPDATE of the row takes: two lockers
-- take turns, an UPDATE of the row waits for the holder, and an INSERT
-- elsewhere whose foreign key names the row (FOR KEY SHARE) does not wait.

-- name: LockOrganization :one
-- Serializes the organization's read-then-write settings (a limit's count,
-- then insert; the policy's version; the default configuration): a second
-- writer reads after the first committed.
SELECT id FROM organizations WHERE id = @id FOR NO KEY UPDATE;

-- name: LockCampaign :one
-- Serializes the writes that read a campaign's row before they change it
-- (a transition naming the state it left, a settings change).
SELECT id FROM campaigns WHERE id = @id FOR NO KEY UPDATE;

-- name: LockAttempt :one
-- Reads attempt @id and holds it until the transaction ends: a final status
-- decides on what it read (state, verdict, attempt number), and a second
-- status for the same attempt, on any node, reads it after this one
-- committed.
SELECT * FROM call_attempts WHERE id = @id FOR NO KEY UPDATE;

-- name: LockKey :exec
-- A transaction-level advisory lock on @key (a text naming what it guards,
-- hashed to 64 bits: two keys of equal hash only wait for each other),
-- released at commit or rollback.
SELECT pg_advisory_xact_lock(hashtextextended(@key, 0));
