-- The agent's side of the call (API.md 19): see SQLite's
-- 0015_abandoned_calls.sql; the same columns in the same order.

ALTER TABLE call_attempts ADD COLUMN agent_connected_at BIGINT;
ALTER TABLE call_attempts ADD COLUMN agent_first_audio_at BIGINT;
ALTER TABLE call_attempts ADD COLUMN agent_failed_at BIGINT;
ALTER TABLE call_attempts ADD COLUMN agent_connected_reported_at BIGINT;
ALTER TABLE call_attempts ADD COLUMN agent_first_audio_reported_at BIGINT;
ALTER TABLE call_attempts ADD COLUMN agent_failed_reported_at BIGINT;
ALTER TABLE call_attempts ADD COLUMN abandoned BIGINT CHECK (abandoned IN (0, 1));
ALTER TABLE call_attempts ADD COLUMN answer_to_first_audio_ms BIGINT;

CREATE INDEX call_attempts_abandonment ON call_attempts (campaign_id, answered_at, abandoned) WHERE abandoned IS NOT NULL;
