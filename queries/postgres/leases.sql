-- PostgreSQL queries of leases.sql that differ between dialects (see sqlc.yaml).

-- name: CheckLease :one
-- The fencing check of a claim or a placement write, in its transaction:
-- a row when @node holds campaign @campaign_id's lease with @generation
-- (none otherwise), saying whether the campaign is stopped (paused or
-- ended, on any node). The lease row and the campaign's are locked FOR
-- SHARE until the transaction ends: a take-over (an UPDATE of the lease)
-- waits for the claim to commit and then sees what it claimed, and a pause
-- on another node (which locks the campaign's row) either commits first,
-- and the claim sees it, or waits for the claim.
SELECT CAST(CASE WHEN c.state IN ('paused', 'cancelled', 'completed', 'failed') THEN 1 ELSE 0 END AS BIGINT) AS stopped
FROM campaign_leases l JOIN campaigns c ON c.id = l.campaign_id
WHERE l.campaign_id = @campaign_id AND l.node = @node AND l.generation = @generation
FOR SHARE OF l, c;
