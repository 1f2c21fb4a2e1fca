-- name: InsertLog :one
INSERT INTO campaign_logs (campaign_id, ts, level, event, message, details) VALUES (@campaign_id, @ts, @level, @event, @message, @details) RETURNING id;

-- name: UpdateLog :exec
UPDATE campaign_logs SET ts = @ts, message = @message, details = @details WHERE id = @id;

-- name: RecentLogs :many
SELECT * FROM (SELECT * FROM campaign_logs l WHERE l.campaign_id = @campaign_id ORDER BY l.id DESC LIMIT 50) ORDER BY id;

-- name: ListLogs :many
SELECT * FROM campaign_logs WHERE campaign_id = @campaign_id AND ts > @ts ORDER BY id LIMIT @limit;

-- name: RecentLogsOfCampaigns :many
-- The newest 50 entries of each campaign of a page of the campaign list, in
-- one query: per campaign, one index seek finds the 50th newest entry's id
-- and one index range reads from there, so the cost does not depend on how
-- many entries a campaign has (a window function would number them all).
SELECT l.id, l.campaign_id, l.ts, l.level, l.event, l.message, l.details
FROM campaigns c
JOIN campaign_logs l ON l.campaign_id = c.id
    AND l.id >= COALESCE((SELECT l2.id FROM campaign_logs l2 WHERE l2.campaign_id = c.id
                          ORDER BY l2.id DESC LIMIT 1 OFFSET 49), 0)
WHERE c.id IN (sqlc.slice('ids'))
ORDER BY c.id, l.id;

-- name: LogsAfterID :many
SELECT * FROM campaign_logs WHERE campaign_id = @campaign_id AND id > @id ORDER BY id LIMIT @limit;

-- name: LastLogID :one
SELECT CAST(COALESCE(MAX(id), 0) AS INTEGER) FROM campaign_logs WHERE campaign_id = @campaign_id;
