-- PostgreSQL queries of call_attempts.sql that differ between dialects (see sqlc.yaml).

-- name: ClaimAttempts :many
UPDATE call_attempts SET state = 'dialing', started_at = @now, deadline_at = @deadline
WHERE id IN (
    SELECT q.id FROM call_attempts q
    WHERE q.campaign_id = @campaign_id AND q.state = 'queued' AND q.due_at <= @now
      AND q.timezone IN (SELECT jsonb_array_elements_text(CAST(CAST(@timezones AS TEXT) AS JSONB)))
    ORDER BY q.priority, q.due_at, q.contact_row
    LIMIT CAST(@max_claims AS BIGINT)
    -- Two nodes' claims never take the same row: a row another claim has
    -- locked is skipped, not waited for (the lease fences the campaign;
    -- this keeps a claim correct by itself).
    FOR UPDATE SKIP LOCKED)
RETURNING *;

