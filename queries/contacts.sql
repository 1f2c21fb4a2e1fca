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

-- name: ContactsWithOutcomes :many
SELECT c.* FROM contacts c
WHERE c.campaign_id = ? AND c.is_final = 1 AND c.outcome IN (SELECT value FROM json_each(?))
ORDER BY c.row_number;

-- name: CampaignTimezones :many
SELECT DISTINCT timezone FROM call_attempts WHERE campaign_id = ? AND state != 'done' ORDER BY timezone;
