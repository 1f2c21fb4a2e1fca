-- SQLite queries of call_attempts.sql that differ between dialects (see sqlc.yaml).

-- name: ClaimAttempts :many
UPDATE call_attempts SET state = 'dialing', started_at = @now, deadline_at = @deadline
WHERE id IN (
    SELECT q.id FROM call_attempts q
    WHERE q.campaign_id = @campaign_id AND q.state = 'queued' AND q.due_at <= @now
      AND q.timezone IN (SELECT value FROM json_each(CAST(@timezones AS TEXT)))
    ORDER BY q.priority, q.due_at, q.contact_row
    -- An expression, not a bare parameter: SQLite re-prepares a statement
    -- whose LIMIT is a bound parameter every time it is bound.
    LIMIT CAST(@max_claims AS INTEGER))
RETURNING *;

