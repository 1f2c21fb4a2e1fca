-- SQLite queries of leases.sql that differ between dialects (see sqlc.yaml).

-- name: CheckLease :one
-- The fencing check of a claim or a placement write, in its transaction:
-- a row when @node holds campaign @campaign_id's lease with @generation
-- (none otherwise), saying whether the campaign is stopped (paused or
-- ended, on any node). SQLite has one writer: nothing else can change the lease before the
-- transaction commits.
SELECT CAST(c.state IN ('paused', 'cancelled', 'completed', 'failed') AS BIGINT) AS stopped
FROM campaign_leases l JOIN campaigns c ON c.id = l.campaign_id
WHERE l.campaign_id = @campaign_id AND l.node = @node AND l.generation = @generation;
