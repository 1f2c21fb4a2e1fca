-- SQLite queries of queue.sql that differ between dialects (see sqlc.yaml).

-- name: QueueStats :many
-- The campaign's queued attempts by timezone, by whether they are due at
-- @now, and by whether a guard rail holds them (their evidence says so and
-- they are not due yet), for the diagnosis (API.md 11): a range of
-- call_attempts_campaign_state, the queue only (first attempts are queued a
-- chunk at a time).
SELECT timezone,
       CAST(due_at <= @now AS INTEGER) AS due,
       CAST(COALESCE(due_at > @now AND json_extract(compliance, '$.calling_hours') = 'held', 0) AS INTEGER) AS hours_held,
       CAST(COALESCE(due_at > @now AND json_extract(compliance, '$.attempt_cap') = 'held', 0) AS INTEGER) AS cap_held,
       CAST(COALESCE(due_at > @now AND json_extract(compliance, '$.abandoned_recall') = 'held', 0) AS INTEGER) AS recall_held,
       count(*) AS n, CAST(min(due_at) AS INTEGER) AS next_due
FROM call_attempts WHERE campaign_id = @campaign_id AND state = 'queued'
GROUP BY 1, 2, 3, 4, 5;

