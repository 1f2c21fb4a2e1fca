-- name: InsertLog :one
INSERT INTO campaign_logs (campaign_id, ts, level, event, message, details) VALUES (@campaign_id, @ts, @level, @event, @message, @details) RETURNING id;

-- name: UpdateLog :exec
UPDATE campaign_logs SET ts = @ts, message = @message, details = @details WHERE id = @id;

-- name: RecentLogs :many
SELECT * FROM (SELECT * FROM campaign_logs l WHERE l.campaign_id = @campaign_id ORDER BY l.id DESC LIMIT 50) recent ORDER BY id;

-- name: ListLogs :many
SELECT * FROM campaign_logs WHERE campaign_id = @campaign_id AND ts > @ts ORDER BY id LIMIT CAST(sqlc.arg('limit') AS BIGINT);

-- name: LogsAfterID :many
SELECT * FROM campaign_logs WHERE campaign_id = @campaign_id AND id > @id ORDER BY id LIMIT CAST(sqlc.arg('limit') AS BIGINT);

-- name: LastLogID :one
SELECT CAST(COALESCE(MAX(id), 0) AS BIGINT) FROM campaign_logs WHERE campaign_id = @campaign_id;
