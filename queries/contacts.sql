-- name: InsertContact :one
INSERT INTO contacts (campaign_id, row_number, phone_number, timezone, context)
VALUES (@campaign_id, @row_number, @phone_number, @timezone, @context) RETURNING id;

-- name: GetContact :one
SELECT * FROM contacts WHERE id = @id;

-- name: FinalizeContact :execrows
UPDATE contacts
SET is_final = 1, outcome = @outcome, attempts = @attempts, last_call_at = @last_call_at, duration_seconds = @duration_seconds, answered_by = @answered_by
WHERE id = @id AND is_final = 0;

-- name: NoteContactAttempt :exec
UPDATE contacts SET attempts = @attempts, last_call_at = @last_call_at, outcome = @outcome WHERE id = @id;

-- name: ListContacts :many
-- A page of the campaign's contacts in row order (the report), each with the
-- guard rails' evidence of its newest attempt that has any (API.md 12.5)
-- and its newest attempt's abandonment verdict (API.md 19): searches of the
-- attempts' (contact_id, attempt) index per contact.
SELECT contacts.*,
    (SELECT a.compliance FROM call_attempts a
     WHERE a.contact_id = contacts.id AND a.compliance IS NOT NULL
     ORDER BY a.attempt DESC LIMIT 1) AS last_compliance,
    (SELECT a.abandoned FROM call_attempts a
     WHERE a.contact_id = contacts.id ORDER BY a.attempt DESC LIMIT 1) AS last_abandoned,
    (SELECT a.answer_to_first_audio_ms FROM call_attempts a
     WHERE a.contact_id = contacts.id ORDER BY a.attempt DESC LIMIT 1) AS last_answer_to_first_audio_ms
FROM contacts WHERE contacts.campaign_id = @campaign_id AND contacts.row_number > @row_number ORDER BY contacts.row_number LIMIT CAST(sqlc.arg('limit') AS BIGINT);
