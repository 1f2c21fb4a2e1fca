-- Event stream leases (API.md 16): the node holding a telephony
-- configuration's lease is the only one that opens its event stream (ARI's
-- events websocket). The same protocol as campaign_leases (leases.sql).

-- name: TakeStreamLease :one
-- Takes configuration @telephony_configuration_id's stream lease for @node
-- until @expires_at when its holder's lease expired at @now or @node holds
-- it already: the generation grows by one. No row: another node holds it,
-- or nobody ever did (InsertStreamLease).
UPDATE event_stream_leases SET node = @node, generation = generation + 1, expires_at = @expires_at
WHERE telephony_configuration_id = @telephony_configuration_id AND (expires_at <= @now OR node = @node)
RETURNING generation;

-- name: InsertStreamLease :one
-- The first stream lease of configuration @telephony_configuration_id,
-- generation 1. No row: a node took it meanwhile.
INSERT INTO event_stream_leases (telephony_configuration_id, node, generation, expires_at)
VALUES (@telephony_configuration_id, @node, 1, @expires_at)
ON CONFLICT (telephony_configuration_id) DO NOTHING
RETURNING generation;

-- name: RenewStreamLeases :many
-- Extends every stream lease @node holds to @expires_at; the rows say
-- which it still holds, and with which generation.
UPDATE event_stream_leases SET expires_at = @expires_at WHERE node = @node
RETURNING telephony_configuration_id, generation;

-- name: ReleaseStreamLease :execrows
-- Hands configuration @telephony_configuration_id's stream lease back
-- (expired at once), if @node still holds it with @generation.
UPDATE event_stream_leases SET expires_at = 0
WHERE telephony_configuration_id = @telephony_configuration_id AND node = @node AND generation = @generation;

-- name: StreamLeaseHolder :one
-- The node holding configuration @telephony_configuration_id's stream
-- lease at @now (no row: none does).
SELECT node FROM event_stream_leases WHERE telephony_configuration_id = @telephony_configuration_id AND expires_at > @now;
