-- name: InsertTelephonyConfig :one
INSERT INTO telephony_configs (organization_id, name, provider, is_default_outbound, credentials, created_at, updated_at)
VALUES (@organization_id, @name, @provider, @is_default_outbound, @credentials, @created_at, @updated_at) RETURNING id;

-- name: SetTelephonyConfigCredentials :exec
UPDATE telephony_configs SET credentials = @credentials WHERE id = @id;

-- name: UpdateTelephonyConfig :exec
UPDATE telephony_configs
SET name = @name, is_default_outbound = @is_default_outbound, credentials = @credentials, updated_at = @updated_at
WHERE id = @id AND organization_id = @organization_id;

-- name: ClearDefaultOutbound :exec
UPDATE telephony_configs SET is_default_outbound = 0, updated_at = @updated_at
WHERE organization_id = @organization_id AND is_default_outbound = 1 AND id != @id;

-- name: GetTelephonyConfig :one
SELECT c.*, (SELECT count(*) FROM phone_numbers p WHERE p.telephony_configuration_id = c.id AND p.is_active = 1) AS phone_number_count
FROM telephony_configs c WHERE c.id = @id AND c.organization_id = @organization_id;

-- name: ListTelephonyConfigs :many
SELECT c.id, c.name, c.provider, c.is_default_outbound, c.created_at, c.updated_at,
       (SELECT count(*) FROM phone_numbers p WHERE p.telephony_configuration_id = c.id AND p.is_active = 1) AS phone_number_count
FROM telephony_configs c WHERE c.organization_id = @organization_id ORDER BY c.id;

-- name: TelephonyConfigNameTaken :one
SELECT count(*) FROM telephony_configs WHERE organization_id = @organization_id AND name = @name AND id != @id;

-- name: DeleteTelephonyConfig :execrows
DELETE FROM telephony_configs WHERE id = @id AND organization_id = @organization_id;

-- name: GetDefaultOutboundConfigID :one
SELECT id FROM telephony_configs WHERE organization_id = @organization_id AND is_default_outbound = 1;

-- name: TelephonyConfigVersion :one
SELECT updated_at FROM telephony_configs WHERE id = @id AND organization_id = @organization_id;

-- name: FirstSealedCredential :many
-- One sealed value the database holds (the oldest configuration's
-- credentials), for checking the server secret at start (none: no row).
SELECT id, credentials FROM telephony_configs ORDER BY id LIMIT 1;
