-- Lazily queued first attempts (store/queue.go).

-- name: QueueCursor :one
SELECT queued_through_row, last_row FROM campaigns WHERE id = ?;

-- name: QueueChunkEnd :one
-- The row number of the @size-th contact after row @after_row.
SELECT row_number FROM contacts
WHERE campaign_id = @campaign_id AND row_number > @after_row
ORDER BY row_number LIMIT 1 OFFSET CAST(@skip AS INTEGER);

-- name: QueueFirstAttempts :execrows
-- The first attempt of every contact of the campaign with a row number in
-- (@after_row, @last_row], in one statement.
INSERT INTO call_attempts (campaign_id, contact_id, contact_row, attempt, priority, due_at, timezone, phone_number)
SELECT c.campaign_id, c.id, c.row_number, 1, 1, 0, c.timezone, c.phone_number
FROM contacts c WHERE c.campaign_id = @campaign_id AND c.row_number > @after_row AND c.row_number <= @last_row
ORDER BY c.row_number;

-- name: SetQueuedThrough :exec
UPDATE campaigns SET queued_through_row = ? WHERE id = ?;
