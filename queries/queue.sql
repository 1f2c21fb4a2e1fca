-- Lazily queued first attempts (store/queue.go).

-- name: QueueCursor :one
SELECT queued_through_row, last_row FROM campaigns WHERE id = @id;

-- name: QueueChunkEnd :one
-- The row number of the @size-th contact after row @after_row.
SELECT row_number FROM contacts
WHERE campaign_id = @campaign_id AND row_number > @after_row
ORDER BY row_number LIMIT 1 OFFSET CAST(@skip AS BIGINT);

-- name: QueueFirstAttempts :execrows
-- The first attempt of every contact of the campaign with a row number in
-- (@after_row, @last_row], in one statement.
INSERT INTO call_attempts (campaign_id, contact_id, contact_row, attempt, priority, due_at, timezone, phone_number)
SELECT c.campaign_id, c.id, c.row_number, 1, 1, 0, c.timezone, c.phone_number
FROM contacts c WHERE c.campaign_id = @campaign_id AND c.row_number > @after_row AND c.row_number <= @last_row
ORDER BY c.row_number;

-- name: AdvanceQueuedThrough :execrows
-- Moves campaign @id's queue cursor from @from_row on to
-- @queued_through_row. No row: another claim moved it first (and queues
-- that chunk); on PostgreSQL this one waited for that claim's commit (the
-- row's lock) and saw the cursor it left.
UPDATE campaigns SET queued_through_row = @queued_through_row WHERE id = @id AND queued_through_row = @from_row;

-- name: RowsWithTimezone :many
-- A few contact rows not final yet with timezone @timezone.
SELECT row_number FROM contacts
WHERE campaign_id = @campaign_id AND timezone = @timezone AND is_final = 0
ORDER BY row_number LIMIT CAST(@max_rows AS BIGINT);

-- name: AddZoneContacts :exec
-- Campaign @campaign_id has @contacts contacts more with timezone value
-- @timezone (an import or a redial publishing its counts).
INSERT INTO campaign_zones (campaign_id, timezone, contacts) VALUES (@campaign_id, @timezone, @contacts)
ON CONFLICT (campaign_id, timezone) DO UPDATE SET contacts = campaign_zones.contacts + excluded.contacts;

-- name: NoteZonesQueued :exec
-- The first attempts of campaign @campaign_id's rows in (@after_row,
-- @last_row] were just queued: count them per timezone.
INSERT INTO campaign_zones (campaign_id, timezone, contacts, queued)
SELECT c.campaign_id, c.timezone, 0, count(*)
FROM contacts c WHERE c.campaign_id = @campaign_id AND c.row_number > @after_row AND c.row_number <= @last_row
GROUP BY c.campaign_id, c.timezone
ON CONFLICT (campaign_id, timezone) DO UPDATE SET queued = campaign_zones.queued + excluded.queued;

-- name: UnqueuedZones :many
-- Contacts whose first attempt is not queued yet (all due), by timezone.
SELECT timezone, CAST(contacts - queued AS BIGINT) AS n FROM campaign_zones
WHERE campaign_id = @campaign_id AND contacts > queued ORDER BY timezone;
