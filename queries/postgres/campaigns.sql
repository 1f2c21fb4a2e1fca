-- PostgreSQL queries of campaigns.sql that differ between dialects (see sqlc.yaml).

-- name: AddCampaignCounts :exec
-- outcome, when not '', is the outcome of a call that ended (the snapshot's
-- outcomes, API.md 10).
UPDATE campaigns
SET processed_rows = processed_rows + @processed, failed_rows = failed_rows + @failed,
    executed_count = executed_count + @executed, total_queued_count = total_queued_count + @queued,
    calls_answered = calls_answered + CAST(CAST(@outcome AS TEXT) = 'answered' AS INTEGER),
    calls_voicemail = calls_voicemail + CAST(@outcome = 'voicemail' AS INTEGER),
    calls_busy = calls_busy + CAST(@outcome = 'busy' AS INTEGER),
    calls_no_answer = calls_no_answer + CAST(@outcome = 'no_answer' AS INTEGER),
    calls_failed = calls_failed + CAST(@outcome = 'failed' AS INTEGER),
    calls_canceled = calls_canceled + CAST(@outcome = 'canceled' AS INTEGER),
    calls_unknown = calls_unknown + CAST(@outcome = 'unknown' AS INTEGER),
    calls_suppressed = calls_suppressed + CAST(@outcome = 'suppressed' AS INTEGER)
WHERE id = @id;

