-- name: ForgetExpiredReplayKey :exec
DELETE FROM webhook_replays WHERE key = @key AND expires_at <= @expires_at;

-- name: RecordReplayKey :execrows
-- One row when key is new (its expired use forgotten first); none when a
-- live one exists: the webhook was applied already.
INSERT INTO webhook_replays (key, expires_at) VALUES (@key, @expires_at) ON CONFLICT (key) DO NOTHING;

-- name: PurgeReplayKeys :execrows
DELETE FROM webhook_replays WHERE key IN (
    SELECT r.key FROM webhook_replays r WHERE r.expires_at <= @now LIMIT CAST(@max_rows AS BIGINT));
