-- name: InsertContact :one
INSERT INTO contacts (campaign_id, row_number, phone_number, timezone, context)
VALUES (?, ?, ?, ?, ?) RETURNING id;

-- name: GetContact :one
SELECT * FROM contacts WHERE id = ?;

-- name: FinalizeContact :execrows
UPDATE contacts
SET is_final = 1, outcome = ?, attempts = ?, last_call_at = ?, duration_seconds = ?, answered_by = ?
WHERE id = ? AND is_final = 0;

-- name: NoteContactAttempt :exec
UPDATE contacts SET attempts = ?, last_call_at = ?, outcome = ? WHERE id = ?;

-- name: ListContacts :many
SELECT * FROM contacts WHERE campaign_id = ? AND row_number > ? ORDER BY row_number LIMIT ?;
