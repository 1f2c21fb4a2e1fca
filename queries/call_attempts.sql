-- name: InsertAttempt :one
INSERT INTO call_attempts (campaign_id, contact_id, contact_row, attempt, priority, due_at, timezone, phone_number)
VALUES (@campaign_id, @contact_id, @contact_row, @attempt, @priority, @due_at, @timezone, @phone_number) RETURNING id;

-- name: CountActiveAttempts :one
SELECT count(*) FROM call_attempts WHERE campaign_id = @campaign_id AND state IN ('dialing', 'in_flight');

-- name: NextQueuedDue :one
-- The earliest due time of the campaign's queued attempts of one priority
-- and timezone: a walk of call_attempts_queue in due order that stops at the
-- first row of the timezone, not a scan of every queued attempt.
SELECT due_at FROM call_attempts
WHERE campaign_id = @campaign_id AND state = 'queued' AND priority = @priority AND timezone = @timezone
ORDER BY due_at LIMIT 1;

-- name: MinDeadline :one
-- Dialing attempts have a deadline too (set by the claim): one whose
-- placement could not be recorded (a full disk) is reconciled like a call
-- in flight.
SELECT CAST(COALESCE(MIN(deadline_at), 0) AS BIGINT) FROM call_attempts WHERE campaign_id = @campaign_id AND state IN ('dialing', 'in_flight');

-- name: MarkAttemptPlaced :execrows
UPDATE call_attempts
SET state = CASE WHEN state = 'dialing' THEN 'in_flight' ELSE state END,
    provider_call_id = COALESCE(provider_call_id, @provider_call_id), caller_id = @caller_id, deadline_at = @deadline_at,
    compliance = COALESCE(sqlc.narg('compliance'), compliance)
WHERE id = @id AND state IN ('dialing', 'done');

-- name: RequeueAttempt :execrows
UPDATE call_attempts SET state = 'queued', due_at = @due_at, started_at = NULL, caller_id = NULL,
    compliance = COALESCE(sqlc.narg('compliance'), compliance)
WHERE id = @id AND state = 'dialing';

-- name: GetAttempt :one
SELECT * FROM call_attempts WHERE id = @id;

-- name: FinishAttempt :execrows
-- Ends attempt @id, dialing or in flight: no row when it is final already
-- or was requeued (ApplyStatus ignores the status then).
UPDATE call_attempts
SET state = 'done', outcome = @outcome, raw_status = @raw_status, answered_by = COALESCE(@answered_by, answered_by),
    error = @error, ended_at = @ended_at, duration_seconds = @duration_seconds,
    answered_at = COALESCE(answered_at, @answered_at), caller_id = COALESCE(caller_id, @caller_id),
    provider_call_id = CASE WHEN provider_call_id IS NULL OR provider_call_id = @replaces
        THEN COALESCE(@provider_call_id, provider_call_id) ELSE provider_call_id END,
    compliance = COALESCE(sqlc.narg('compliance'), compliance),
    abandoned = sqlc.narg('abandoned'), answer_to_first_audio_ms = sqlc.narg('answer_to_first_audio_ms')
WHERE id = @id AND state IN ('dialing', 'in_flight');

-- name: NoteAttemptProgress :execrows
UPDATE call_attempts
SET raw_status = @raw_status, answered_at = COALESCE(answered_at, @answered_at),
    answered_by = COALESCE(@answered_by, answered_by), sequence = @sequence,
    provider_call_id = CASE WHEN provider_call_id IS NULL OR provider_call_id = @replaces
        THEN COALESCE(@provider_call_id, provider_call_id) ELSE provider_call_id END
WHERE id = @id AND state IN ('dialing', 'in_flight') AND sequence <= @sequence;

-- name: UnfinishedAttempts :many
SELECT * FROM call_attempts WHERE state IN ('dialing', 'in_flight') ORDER BY id;

-- name: UnfinishedAttemptsOf :many
-- A range of call_attempts_campaign_state per state.
SELECT * FROM call_attempts WHERE campaign_id = @campaign_id AND state IN ('dialing', 'in_flight') ORDER BY id;

-- name: ExpiredAttempts :many
SELECT * FROM call_attempts WHERE campaign_id = @campaign_id AND state IN ('dialing', 'in_flight') AND deadline_at <= @deadline_at ORDER BY id;

-- One query per filter, each an index range (call_attempts_campaign,
-- _campaign_state, _campaign_outcome): a page costs the same at any depth.
-- A single query with optional filters would be planned once for all of
-- them and scan.

-- name: ListAttempts :many
SELECT * FROM call_attempts
WHERE campaign_id = @campaign_id AND id > @after_id
ORDER BY id LIMIT CAST(@max_rows AS BIGINT);

-- name: ListAttemptsByState :many
SELECT * FROM call_attempts
WHERE campaign_id = @campaign_id AND state = @state AND id > @after_id
ORDER BY id LIMIT CAST(@max_rows AS BIGINT);

-- name: ListAttemptsByOutcome :many
SELECT * FROM call_attempts
WHERE campaign_id = @campaign_id AND outcome = @outcome AND id > @after_id
  AND (state = sqlc.narg('state') OR sqlc.narg('state') IS NULL)
ORDER BY id LIMIT CAST(@max_rows AS BIGINT);

-- name: LastAttemptOfContact :one
SELECT * FROM call_attempts WHERE contact_id = @contact_id ORDER BY attempt DESC LIMIT 1;

-- name: PickCallerID :one
SELECT id, address_normalized FROM phone_numbers
WHERE telephony_configuration_id = @telephony_configuration_id AND is_active = 1
ORDER BY is_default_caller_id DESC, COALESCE(last_used_at, 0), id LIMIT 1;

-- name: PickAndTouchCallerID :one
UPDATE phone_numbers SET last_used_at = @now
WHERE id = (SELECT p.id FROM phone_numbers p
            WHERE p.telephony_configuration_id = @telephony_configuration_id AND p.is_active = 1
            ORDER BY p.is_default_caller_id DESC, COALESCE(p.last_used_at, 0), p.id LIMIT 1)
RETURNING address_normalized;

-- name: TouchCallerID :exec
UPDATE phone_numbers SET last_used_at = @last_used_at WHERE id = @id;

-- name: CountActiveCallerIDs :one
SELECT count(*) FROM phone_numbers WHERE telephony_configuration_id = @telephony_configuration_id AND is_active = 1;

-- name: NoteExecuted :execrows
-- Marks attempt id as a call the provider placed; one row the first time.
UPDATE call_attempts SET executed = 1 WHERE id = @id AND executed = 0;

-- name: NoteExecutedByProgress :one
-- Marks attempt id, dialing or in flight, as a call the provider placed when
-- a progress report of the provider's names it; its campaign the first time,
-- no row after.
UPDATE call_attempts SET executed = 1
WHERE id = @id AND executed = 0 AND state IN ('dialing', 'in_flight')
RETURNING campaign_id;

-- name: MarkAttemptUnconfirmed :execrows
-- The place request's answer was lost (a 5xx, a timeout, a reset after
-- sending, an unreadable 2xx): the call may be ringing. The attempt holds
-- its slot as if in flight, without a provider call id, until a status
-- webhook (they carry its token), a query or its deadline settles it.
UPDATE call_attempts SET state = 'in_flight', caller_id = @caller_id, deadline_at = @deadline_at, error = @error,
    compliance = COALESCE(sqlc.narg('compliance'), compliance)
WHERE id = @id AND state = 'dialing';

-- name: InFlightAttemptIDsForConfig :many
-- The attempts placed through a configuration whose outcome is still to be
-- recorded: what its event stream must follow. Those still dialing are
-- marked: their placement is under way (on this node the carrier follows
-- them itself; on another node sharing the database, the stream must
-- follow them too) or was interrupted by a crash (Engine.Start settles
-- them).
SELECT a.id, CAST(CASE WHEN a.answered_at IS NOT NULL THEN 1 ELSE 0 END AS BIGINT) AS answered,
       CAST(CASE WHEN a.state = 'dialing' THEN 1 ELSE 0 END AS BIGINT) AS dialing
FROM call_attempts a
WHERE a.campaign_id IN (SELECT c.id FROM campaigns c WHERE c.telephony_configuration_id = @telephony_configuration_id)
  AND a.state IN ('dialing', 'in_flight')
ORDER BY a.id;

-- name: RecordAgentEvent :execrows
-- Records the voice agent's first report of an event (API.md 19): the
-- caller passes the arrival and reported times of that one event, NULL for
-- the others, and @late_ms when a first first_audio arrives after the call
-- ended with a person's answer (AgentEvent decides, under the row lock).
UPDATE call_attempts
SET agent_connected_at = COALESCE(agent_connected_at, sqlc.narg('connected_at')),
    agent_first_audio_at = COALESCE(agent_first_audio_at, sqlc.narg('first_audio_at')),
    agent_failed_at = COALESCE(agent_failed_at, sqlc.narg('failed_at')),
    agent_connected_reported_at = COALESCE(agent_connected_reported_at, sqlc.narg('connected_reported_at')),
    agent_first_audio_reported_at = COALESCE(agent_first_audio_reported_at, sqlc.narg('first_audio_reported_at')),
    agent_failed_reported_at = COALESCE(agent_failed_reported_at, sqlc.narg('failed_reported_at')),
    answer_to_first_audio_ms = COALESCE(answer_to_first_audio_ms, sqlc.narg('late_ms'))
WHERE id = @id;

-- name: AbandonedCountsOfCampaign :one
-- The campaign's person-answered calls answered since @since, and how many
-- of them were abandoned (the call_attempts_abandonment index covers it);
-- nothing when the campaign is not the organization's.
SELECT count(*) AS answered, count(CASE WHEN a.abandoned = 1 THEN 1 END) AS abandoned
FROM campaigns c JOIN call_attempts a ON a.campaign_id = c.id
WHERE c.id = @campaign_id AND c.organization_id = @organization_id AND a.abandoned IS NOT NULL AND a.answered_at >= @since;

-- name: AbandonedCountsOfOrganization :one
-- AbandonedCountsOfCampaign over every campaign of the organization.
SELECT count(*) AS answered, count(CASE WHEN a.abandoned = 1 THEN 1 END) AS abandoned
FROM campaigns c JOIN call_attempts a ON a.campaign_id = c.id
WHERE c.organization_id = @organization_id AND a.abandoned IS NOT NULL AND a.answered_at >= @since;
