-- name: GetOrganizationByName :one
SELECT * FROM organizations WHERE name = @name;

-- name: CreateOrganization :one
-- No row when an organization of that name exists (one created at once by
-- another transaction: this insert waited for its commit).
INSERT INTO organizations (name, created_at) VALUES (@name, @created_at)
ON CONFLICT (name) DO NOTHING RETURNING *;

-- name: CreateAPIKey :one
INSERT INTO api_keys (organization_id, name, prefix, key_hash, created_at, role)
VALUES (@organization_id, @name, @prefix, @key_hash, @created_at, @role) RETURNING *;

-- name: GetOrganizationByID :one
SELECT * FROM organizations WHERE id = @id;

-- name: ListOrgAPIKeys :many
-- An organization's keys not revoked, oldest first.
SELECT * FROM api_keys WHERE organization_id = @organization_id AND revoked_at IS NULL ORDER BY id;

-- name: RevokeOrgAPIKey :execrows
UPDATE api_keys SET revoked_at = @revoked_at
WHERE id = @id AND organization_id = @organization_id AND revoked_at IS NULL;

-- name: DeleteAPIKeySessions :execrows
DELETE FROM console_sessions WHERE api_key_id = @api_key_id;

-- name: TouchAPIKey :exec
-- Records a key's use at most once per interval: stale_before is now minus
-- the interval.
UPDATE api_keys SET last_used_at = sqlc.arg(now)
WHERE id = sqlc.arg(id) AND (last_used_at IS NULL OR last_used_at <= sqlc.arg(stale_before));

-- name: GetOrganizationSecurity :one
SELECT require_totp FROM organizations WHERE id = @id;

-- name: SetOrganizationRequireTOTP :execrows
UPDATE organizations SET require_totp = @require_totp WHERE id = @id;

-- name: ListAPIKeys :many
SELECT api_keys.*, organizations.name AS organization_name
FROM api_keys JOIN organizations ON organizations.id = api_keys.organization_id
ORDER BY api_keys.id;

-- name: RevokeAPIKey :execrows
UPDATE api_keys SET revoked_at = @revoked_at WHERE id = @id AND revoked_at IS NULL;

-- name: GetAPIKeyByID :one
SELECT * FROM api_keys WHERE id = @id;

-- name: AuthenticateAPIKey :one
SELECT api_keys.id, api_keys.organization_id, api_keys.name, api_keys.role, api_keys.last_used_at
FROM api_keys WHERE key_hash = @key_hash AND revoked_at IS NULL;


-- name: GetOrganizationLimits :one
SELECT max_concurrent_calls FROM organizations WHERE id = @id;

-- name: SetOrganizationLimits :execrows
UPDATE organizations SET max_concurrent_calls = @max_concurrent_calls WHERE id = @id;

-- name: OrganizationActiveAttempts :many
-- The attempts of organization @organization_id dialing or in flight, per
-- campaign (any state: a paused campaign's calls in flight hold agents too).
SELECT a.campaign_id, count(*) AS in_flight FROM call_attempts a JOIN campaigns c ON c.id = a.campaign_id
WHERE c.organization_id = @organization_id AND a.state IN ('dialing', 'in_flight')
GROUP BY a.campaign_id;

-- name: OrganizationReadyCampaigns :many
-- The organization's running campaigns that may have contacts ready at
-- @now (none waits for a later due time): those sharing its limit.
SELECT id, max_concurrency FROM campaigns
WHERE organization_id = @organization_id AND state = 'running' AND (next_dial_at IS NULL OR next_dial_at <= @now);
