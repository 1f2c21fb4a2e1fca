-- name: InsertLog :one
INSERT INTO campaign_logs (campaign_id, ts, level, event, message, details) VALUES (?, ?, ?, ?, ?, ?) RETURNING id;

-- name: UpdateLog :exec
UPDATE campaign_logs SET ts = ?, message = ?, details = ? WHERE id = ?;

-- name: RecentLogs :many
SELECT * FROM (SELECT * FROM campaign_logs l WHERE l.campaign_id = ? ORDER BY l.id DESC LIMIT 50) ORDER BY id;

-- name: ListLogs :many
SELECT * FROM campaign_logs WHERE campaign_id = ? AND ts > ? ORDER BY id LIMIT ?;
