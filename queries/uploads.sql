-- name: UploadSourceUses :many
-- For the uploads retention sweep (store/uploads.go): per object key
-- campaigns were created from (source_id), when the newest visible one was
-- created (0: none) and whether one is still importing (reading the file).
-- A visible campaign has copied its contacts and no longer needs the file.
-- Redials copy their parent's stored contacts and never read it.
SELECT source_id,
       CAST(COALESCE(MAX(CASE WHEN visibility = 'visible' THEN created_at END), 0) AS BIGINT) AS last_created_at,
       CAST(COALESCE(MAX(CASE WHEN visibility = 'importing' THEN 1 ELSE 0 END), 0) AS BIGINT) AS importing
FROM campaigns
WHERE parent_campaign_id IS NULL
GROUP BY source_id;
