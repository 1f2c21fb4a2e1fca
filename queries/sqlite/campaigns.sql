-- SQLite queries of campaigns.sql that differ between dialects (see sqlc.yaml).

-- name: AddCampaignCounts :exec
-- outcome, when not '', is the outcome of a call that ended (the snapshot's
-- outcomes, API.md 10).
UPDATE campaigns
SET processed_rows = processed_rows + @processed, failed_rows = failed_rows + @failed,
    executed_count = executed_count + @executed, total_queued_count = total_queued_count + @queued,
    calls_answered = calls_answered + (CAST(@outcome AS TEXT) = 'answered'),
    calls_voicemail = calls_voicemail + (@outcome = 'voicemail'),
    calls_busy = calls_busy + (@outcome = 'busy'),
    calls_no_answer = calls_no_answer + (@outcome = 'no_answer'),
    calls_failed = calls_failed + (@outcome = 'failed'),
    calls_canceled = calls_canceled + (@outcome = 'canceled'),
    calls_unknown = calls_unknown + (@outcome = 'unknown'),
    calls_suppressed = calls_suppressed + (@outcome = 'suppressed')
WHERE id = @id;

