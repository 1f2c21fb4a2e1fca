-- name: TakeLease :one
-- Takes campaign @campaign_id's lease for @node until @expires_at when its
-- holder's lease expired at @now or @node holds it already (a node
-- restarted under its name): the generation grows by one. No row: another
-- node holds it, or nobody ever did (InsertLease).
UPDATE campaign_leases SET node = @node, generation = generation + 1, expires_at = @expires_at
WHERE campaign_id = @campaign_id AND (expires_at <= @now OR node = @node)
RETURNING generation;

-- name: InsertLease :one
-- The first lease of campaign @campaign_id, generation 1. No row: a node
-- took it meanwhile.
INSERT INTO campaign_leases (campaign_id, node, generation, expires_at)
VALUES (@campaign_id, @node, 1, @expires_at)
ON CONFLICT (campaign_id) DO NOTHING
RETURNING generation;

-- name: RenewLeases :many
-- Extends every lease @node holds to @expires_at; the rows say which it
-- still holds, and with which generation.
UPDATE campaign_leases SET expires_at = @expires_at WHERE node = @node
RETURNING campaign_id, generation;

-- name: ReleaseLease :execrows
-- Hands campaign @campaign_id's lease back (expired at once), if @node still
-- holds it with @generation.
UPDATE campaign_leases SET expires_at = 0
WHERE campaign_id = @campaign_id AND node = @node AND generation = @generation;

-- name: LeaseHolders :many
-- The nodes holding unexpired leases at @now: a campaign's dialed_by.
SELECT campaign_id, node FROM campaign_leases WHERE expires_at > @now;

-- name: LeaseHolder :one
SELECT node FROM campaign_leases WHERE campaign_id = @campaign_id AND expires_at > @now;

-- name: OrphanedCampaigns :many
-- Campaigns that need a node and have none at @now: running ones whose
-- lease is missing, expired or handed back, and others whose lease expired
-- with calls still dialing or in flight (their deadlines need watching).
SELECT c.id FROM campaigns c LEFT JOIN campaign_leases l ON l.campaign_id = c.id
WHERE c.visibility = 'visible' AND (l.campaign_id IS NULL OR l.expires_at <= @now)
  AND (c.state = 'running'
       OR (l.campaign_id IS NOT NULL AND EXISTS (
            SELECT 1 FROM call_attempts a WHERE a.campaign_id = c.id AND a.state IN ('dialing', 'in_flight'))))
ORDER BY c.id;

-- name: GetLease :one
SELECT * FROM campaign_leases WHERE campaign_id = @campaign_id;

-- name: OrganizationLeaseNodes :many
-- The nodes holding unexpired leases at @now on campaigns of organization
-- @organization_id: the nodes that may be placing its calls.
SELECT DISTINCT l.node FROM campaign_leases l JOIN campaigns c ON c.id = l.campaign_id
WHERE c.organization_id = @organization_id AND l.expires_at > @now
ORDER BY l.node;
