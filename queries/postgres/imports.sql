-- PostgreSQL queries of imports.sql that differ between dialects (see sqlc.yaml).

-- name: CopyRedialContacts :execrows
-- The final contacts of @parent_id with one of the outcomes and a row
-- number in (@after_row, @through_row], copied to campaign @campaign_id
-- with their row numbers, CSV columns and timezone. A chunk is a range of
-- row numbers, not a number of matches: however sparse the matches, one
-- chunk reads a bounded number of the parent's contacts.
INSERT INTO contacts (campaign_id, row_number, phone_number, timezone, context)
SELECT CAST(@campaign_id AS BIGINT), p.row_number, p.phone_number, p.timezone, p.context
FROM contacts p
WHERE p.campaign_id = @parent_id AND p.row_number > @after_row AND p.row_number <= @through_row AND p.is_final = 1
  AND p.outcome IN (SELECT jsonb_array_elements_text(CAST(CAST(@outcomes AS TEXT) AS JSONB)))
ORDER BY p.row_number;

