-- name: InsertCampaign :one
INSERT INTO campaigns (organization_id, name, workflow_id, workflow_name,
                       telephony_configuration_id, config_name_at_create, source_type, source_id, default_country, retry_config,
                       schedule_config, circuit_breaker, max_concurrency, rate_limit_per_second,
                       parent_campaign_id, created_at, updated_at, visibility)
VALUES (@organization_id, @name, @workflow_id, @workflow_name, @telephony_configuration_id, @config_name_at_create, 'csv', @source_id, @default_country, @retry_config, @schedule_config, @circuit_breaker, @max_concurrency, @rate_limit_per_second, @parent_campaign_id, @created_at, @updated_at, 'importing') RETURNING id;

-- name: InsertCampaignDefinition :exec
INSERT INTO campaign_definitions (campaign_id, definition) VALUES (@campaign_id, @definition);

-- name: PublishCampaign :execrows
UPDATE campaigns SET total_rows = @total_rows, total_queued_count = @total_rows, columns = @columns,
    timezones = @timezones, zone_sets = @zone_sets, last_row = @last_row, visibility = 'visible'
WHERE id = @id AND visibility = 'importing';

-- name: GetCampaign :one
SELECT c.*, CAST(COALESCE(t.name, c.config_name_at_create) AS TEXT) AS telephony_configuration_name,
       CAST(COALESCE(d.definition, '{}') AS TEXT) AS workflow_definition
FROM campaigns c LEFT JOIN telephony_configs t ON t.id = c.telephony_configuration_id
LEFT JOIN campaign_definitions d ON d.campaign_id = c.id
WHERE c.id = @id AND c.organization_id = @organization_id AND c.visibility = 'visible';

-- name: GetCampaignByID :one
SELECT c.*, CAST(COALESCE(t.name, c.config_name_at_create) AS TEXT) AS telephony_configuration_name,
       CAST(COALESCE(d.definition, '{}') AS TEXT) AS workflow_definition
FROM campaigns c LEFT JOIN telephony_configs t ON t.id = c.telephony_configuration_id
LEFT JOIN campaign_definitions d ON d.campaign_id = c.id
WHERE c.id = @id AND c.visibility = 'visible';

-- name: ListCampaigns :many
-- Without the workflow definition (campaign_definitions): a list never
-- shows it. The empty column keeps the row's shape GetCampaign's.
SELECT c.*, CAST(COALESCE(t.name, c.config_name_at_create) AS TEXT) AS telephony_configuration_name,
       CAST('' AS TEXT) AS workflow_definition
FROM campaigns c LEFT JOIN telephony_configs t ON t.id = c.telephony_configuration_id
WHERE c.organization_id = @organization_id AND c.id < @id AND c.visibility = 'visible'
ORDER BY c.id DESC LIMIT CAST(sqlc.arg('limit') AS BIGINT);

-- name: UpdateCampaignSettings :exec
UPDATE campaigns
SET name = @name, retry_config = @retry_config, max_concurrency = @max_concurrency, rate_limit_per_second = @rate_limit_per_second, schedule_config = @schedule_config,
    circuit_breaker = @circuit_breaker, updated_at = @updated_at
WHERE id = @id;

-- name: StartCampaign :execrows
UPDATE campaigns
SET state = 'running', started_at = COALESCE(started_at, @started_at), breaker_reset_at = @breaker_reset_at, updated_at = @updated_at
WHERE id = @id AND state IN ('draft', 'paused');

-- name: MoveCampaignState :execrows
UPDATE campaigns SET state = @to_state, updated_at = @now, next_dial_at = NULL
WHERE id = @id AND state = @from_state
  AND (CAST(sqlc.narg('since') AS BIGINT) IS NULL OR breaker_reset_at IS NULL OR breaker_reset_at <= CAST(sqlc.narg('since') AS BIGINT));

-- name: ResumeCampaign :execrows
UPDATE campaigns SET state = 'running', breaker_reset_at = @breaker_reset_at, updated_at = @updated_at
WHERE id = @id AND state = 'paused';

-- name: CancelCampaign :execrows
UPDATE campaigns SET state = 'cancelled', cancelled_at = @cancelled_at, updated_at = @updated_at, next_dial_at = NULL
WHERE id = @id AND state IN ('draft', 'running', 'paused');

-- name: CompleteCampaign :execrows
UPDATE campaigns SET state = 'completed', completed_at = @completed_at, updated_at = @updated_at, next_dial_at = NULL
WHERE id = @id AND state = 'running' AND processed_rows >= total_rows;

-- name: SetNextDialAt :exec
UPDATE campaigns SET next_dial_at = @next_dial_at WHERE id = @id;

-- name: SetRedialed :execrows
UPDATE campaigns SET redialed_campaign_id = @redialed_campaign_id, updated_at = @updated_at WHERE id = @id AND redialed_campaign_id IS NULL;

-- name: RunningCampaignIDs :many
SELECT id FROM campaigns WHERE state = 'running' AND visibility = 'visible' ORDER BY id;

-- name: CampaignSnapshot :one
-- The counters of a live snapshot (API.md 10): one row, no definition.
SELECT id, organization_id, state, total_rows, processed_rows, failed_rows, executed_count,
       max_concurrency, next_dial_at, calls_answered, calls_voicemail, calls_busy, calls_no_answer,
       calls_failed, calls_canceled, calls_unknown, calls_suppressed
FROM campaigns WHERE id = @id AND visibility = 'visible';

-- name: CountUnfinishedCampaignsForWorkflow :one
SELECT count(*) FROM campaigns WHERE workflow_id = @workflow_id AND state IN ('draft', 'running', 'paused') AND visibility != 'deleting';

-- name: CountUnfinishedCampaignsForConfig :one
SELECT count(*) FROM campaigns WHERE telephony_configuration_id = @telephony_configuration_id AND state IN ('draft', 'running', 'paused') AND visibility != 'deleting';

-- name: GetCampaignRetryConfig :one
SELECT retry_config FROM campaigns WHERE id = @id;

-- name: CountActiveAttemptsForConfig :one
-- Calls placed through a configuration whose outcome is still to be
-- recorded (its webhooks and deadline queries need the configuration).
SELECT count(*) FROM call_attempts a
WHERE a.campaign_id IN (SELECT c.id FROM campaigns c WHERE c.telephony_configuration_id = @telephony_configuration_id)
  AND a.state IN ('dialing', 'in_flight');

-- name: CampaignZoneSets :one
SELECT zone_sets FROM campaigns WHERE id = @id;

-- name: CampaignCountsByState :many
SELECT state, COUNT(*) AS n FROM campaigns GROUP BY state;

-- name: UnfinishedCampaignIDs :many
-- The organization's newest campaigns that may still dial (an
-- organization-wide event stream's first snapshots).
SELECT id FROM campaigns
WHERE organization_id = @organization_id AND state IN ('draft', 'running', 'paused') AND visibility = 'visible'
ORDER BY id DESC LIMIT CAST(sqlc.arg('limit') AS BIGINT);
