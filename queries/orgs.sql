-- name: GetOrganizationByName :one
SELECT * FROM organizations WHERE name = @name;

-- name: CreateOrganization :one
-- No row when an organization of that name exists (one created at once by
-- another transaction: this insert waited for its commit).
INSERT INTO organizations (name, created_at) VALUES (@name, @created_at)
ON CONFLICT (name) DO NOTHING RETURNING *;

-- name: CreateAPIKey :one
INSERT INTO api_keys (organization_id, name, prefix, key_hash, created_at)
VALUES (@organization_id, @name, @prefix, @key_hash, @created_at) RETURNING *;

-- name: ListAPIKeys :many
SELECT api_keys.*, organizations.name AS organization_name
FROM api_keys JOIN organizations ON organizations.id = api_keys.organization_id
ORDER BY api_keys.id;

-- name: RevokeAPIKey :execrows
UPDATE api_keys SET revoked_at = @revoked_at WHERE id = @id AND revoked_at IS NULL;

-- name: GetAPIKeyByID :one
SELECT * FROM api_keys WHERE id = @id;

-- name: AuthenticateAPIKey :one
SELECT api_keys.id, api_keys.organization_id
FROM api_keys WHERE key_hash = @key_hash AND revoked_at IS NULL;

