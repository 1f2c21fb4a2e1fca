-- The agent's side of the call (API.md 19). Times are unix milliseconds;
-- booleans are 0/1.
--
-- agent_*_at: when the voice agent's first report of each event arrived
-- (POST /api/v1/telephony/agent/{attempt_id}); agent_*_reported_at: the
-- "at" that report carried, recorded as given and never trusted. NULL until
-- the first report; a repeat changes nothing.
ALTER TABLE call_attempts ADD COLUMN agent_connected_at INTEGER;
ALTER TABLE call_attempts ADD COLUMN agent_first_audio_at INTEGER;
ALTER TABLE call_attempts ADD COLUMN agent_failed_at INTEGER;
ALTER TABLE call_attempts ADD COLUMN agent_connected_reported_at INTEGER;
ALTER TABLE call_attempts ADD COLUMN agent_first_audio_reported_at INTEGER;
ALTER TABLE call_attempts ADD COLUMN agent_failed_reported_at INTEGER;
-- Decided when the call ends: NULL when no person answered, else whether
-- the call was abandoned (no audio within abandon_after_ms of the answer,
-- or the agent failed first). answer_to_first_audio_ms: from the answer to
-- the first first_audio (also one that arrives after the end); NULL when
-- none came.
ALTER TABLE call_attempts ADD COLUMN abandoned INTEGER CHECK (abandoned IN (0, 1));
ALTER TABLE call_attempts ADD COLUMN answer_to_first_audio_ms INTEGER;

-- The abandonment rate over a window (AbandonedRate): person-answered calls
-- only, by campaign and answer time, covering the verdict.
CREATE INDEX call_attempts_abandonment ON call_attempts (campaign_id, answered_at, abandoned) WHERE abandoned IS NOT NULL;
