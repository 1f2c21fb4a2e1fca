-- PostgreSQL queries of queue.sql that differ between dialects (see sqlc.yaml).

-- name: QueueStats :many
-- The campaign's queued attempts by timezone, by whether they are due at
-- @now, and by whether a guard rail holds them (their evidence says so and
-- they are not due yet), for the diagnosis (API.md 11): a range of
-- call_attempts_campaign_state, the queue only (first attempts are queued a
-- chunk at a time).
SELECT timezone,
       CAST(CASE WHEN due_at <= @now THEN 1 ELSE 0 END AS BIGINT) AS due,
       CAST(CASE WHEN due_at > @now AND CAST(compliance AS JSONB) ->> 'calling_hours' = 'held' THEN 1 ELSE 0 END AS BIGINT) AS hours_held,
       CAST(CASE WHEN due_at > @now AND CAST(compliance AS JSONB) ->> 'attempt_cap' = 'held' THEN 1 ELSE 0 END AS BIGINT) AS cap_held,
       CAST(CASE WHEN due_at > @now AND CAST(compliance AS JSONB) ->> 'abandoned_recall' = 'held' THEN 1 ELSE 0 END AS BIGINT) AS recall_held,
       count(*) AS n, CAST(min(due_at) AS BIGINT) AS next_due
FROM call_attempts WHERE campaign_id = @campaign_id AND state = 'queued'
GROUP BY 1, 2, 3, 4, 5;

