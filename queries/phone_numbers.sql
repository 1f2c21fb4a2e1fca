-- name: InsertPhoneNumber :one
INSERT INTO phone_numbers (organization_id, telephony_configuration_id, address, address_normalized, address_type,
                           country_code, label, is_active, is_default_caller_id, created_at, updated_at)
VALUES (@organization_id, @telephony_configuration_id, @address, @address_normalized, @address_type, @country_code, @label, 1, @is_default_caller_id, @created_at, @updated_at) RETURNING *;

-- name: GetPhoneNumber :one
SELECT * FROM phone_numbers WHERE id = @id AND telephony_configuration_id = @telephony_configuration_id AND organization_id = @organization_id;

-- name: ListPhoneNumbers :many
SELECT * FROM phone_numbers WHERE telephony_configuration_id = @telephony_configuration_id AND organization_id = @organization_id ORDER BY id;

-- name: PhoneAddressTaken :one
SELECT count(*) FROM phone_numbers WHERE organization_id = @organization_id AND address_normalized = @address_normalized AND id != @id;

-- name: UpdatePhoneNumber :one
UPDATE phone_numbers SET label = @label, is_active = @is_active, is_default_caller_id = @is_default_caller_id, updated_at = @updated_at
WHERE id = @id AND organization_id = @organization_id RETURNING *;

-- name: ClearDefaultCallerID :exec
UPDATE phone_numbers SET is_default_caller_id = 0, updated_at = @updated_at
WHERE telephony_configuration_id = @telephony_configuration_id AND is_default_caller_id = 1 AND id != @id;

-- name: DeletePhoneNumber :execrows
DELETE FROM phone_numbers WHERE id = @id AND telephony_configuration_id = @telephony_configuration_id AND organization_id = @organization_id;
