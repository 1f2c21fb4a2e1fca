-- SQLite queries of contacts.sql that differ between dialects (see sqlc.yaml).

-- name: ContactContextsByID :many
-- The CSV columns (context) of the campaign's contacts among ids: one
-- primary-key search per id (the calls list's ?columns=, API.md 4.6).
SELECT id, context FROM contacts WHERE campaign_id = @campaign_id AND id IN (sqlc.slice('ids'));
