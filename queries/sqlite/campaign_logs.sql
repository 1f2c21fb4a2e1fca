-- SQLite queries of campaign_logs.sql that differ between dialects (see sqlc.yaml).

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

