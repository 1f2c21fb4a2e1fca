-- Importing and purging campaigns in chunks (store/import.go, store/purge.go).
-- The contacts of a chunk are inserted with a multi-row VALUES statement
-- that sqlc cannot express (queries/bulk.go); everything else is here.

-- name: LastContactRow :one
SELECT CAST(COALESCE(MAX(row_number), 0) AS BIGINT) FROM contacts WHERE campaign_id = @campaign_id;

-- name: ContactTimezonesAfter :many
-- The contacts per timezone of campaign @campaign_id after row @row_number
-- (a redial's chunk just copied).
SELECT timezone, count(*) AS n FROM contacts WHERE campaign_id = @campaign_id AND row_number > @row_number GROUP BY timezone ORDER BY timezone;

-- name: DiscardImport :exec
UPDATE campaigns SET visibility = 'deleting' WHERE id = @id AND visibility = 'importing';

-- name: HideCampaign :execrows
-- DELETE /campaign/{id}: a draft or finished campaign with no call still to
-- be recorded becomes 'deleting', invisible at once and purged in chunks.
UPDATE campaigns SET visibility = 'deleting', updated_at = @now
WHERE campaigns.id = @id AND campaigns.organization_id = @organization_id AND campaigns.visibility = 'visible'
  AND campaigns.state IN ('draft', 'completed', 'cancelled', 'failed')
  AND NOT EXISTS (SELECT 1 FROM call_attempts a WHERE a.campaign_id = campaigns.id AND a.state IN ('dialing', 'in_flight'));

-- name: UnlinkRedials :exec
UPDATE campaigns
SET parent_campaign_id = CASE WHEN parent_campaign_id = @id THEN NULL ELSE parent_campaign_id END,
    redialed_campaign_id = CASE WHEN redialed_campaign_id = @id THEN NULL ELSE redialed_campaign_id END
WHERE parent_campaign_id = @id OR redialed_campaign_id = @id;

-- name: HiddenCampaignIDs :many
SELECT id FROM campaigns WHERE visibility != 'visible' ORDER BY id;

-- name: PurgeAttempts :execrows
DELETE FROM call_attempts WHERE id IN (
    SELECT a.id FROM call_attempts a WHERE a.campaign_id = @campaign_id LIMIT CAST(@max_rows AS BIGINT));

-- name: PurgeContacts :execrows
DELETE FROM contacts WHERE id IN (
    SELECT c.id FROM contacts c WHERE c.campaign_id = @campaign_id LIMIT CAST(@max_rows AS BIGINT));

-- name: PurgeLogs :execrows
DELETE FROM campaign_logs WHERE id IN (
    SELECT l.id FROM campaign_logs l WHERE l.campaign_id = @campaign_id LIMIT CAST(@max_rows AS BIGINT));

-- name: DeleteHiddenCampaign :execrows
DELETE FROM campaigns WHERE id = @id AND visibility != 'visible';
