-- The audit trail (API.md 17): inserted, listed, and deleted only by
-- retention.

-- name: InsertAuditEntry :one
INSERT INTO audit_entries (organization_id, at, actor_type, actor_id, actor_name, action, method, route,
                           target_type, target_id, changes, status, address)
VALUES (@organization_id, @at, @actor_type, @actor_id, @actor_name, @action, @method, @route,
        @target_type, @target_id, @changes, @status, @address)
RETURNING id;

-- name: ListAuditEntries :many
-- An organization's entries after after_id, oldest first, with the
-- filters that are not NULL: a range of the (organization_id, id) index.
SELECT * FROM audit_entries
WHERE organization_id = sqlc.arg(organization_id) AND id > sqlc.arg(after_id)
  AND (actor_type = sqlc.narg(actor_type) OR sqlc.narg(actor_type) IS NULL)
  AND (actor_id = sqlc.narg(actor_id) OR sqlc.narg(actor_id) IS NULL)
  AND (action = sqlc.narg(action) OR sqlc.narg(action) IS NULL)
  AND (target_type = sqlc.narg(target_type) OR sqlc.narg(target_type) IS NULL)
  AND (target_id = sqlc.narg(target_id) OR sqlc.narg(target_id) IS NULL)
ORDER BY id LIMIT CAST(sqlc.arg(max_rows) AS BIGINT);

-- name: PurgeAuditEntries :execrows
-- At most max_rows entries older than before, the oldest first (retention
-- deletes in chunks, not in one long transaction).
DELETE FROM audit_entries WHERE id IN (
    SELECT old.id FROM audit_entries AS old WHERE old.at < sqlc.arg(before) ORDER BY old.at LIMIT CAST(sqlc.arg(max_rows) AS BIGINT));
