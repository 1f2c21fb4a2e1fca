-- Large lists (API.md section 9). A campaign is imported in many small
-- transactions so that one tenant's million-row upload never holds the
-- only writer for long; until the last one commits the campaign is
-- 'importing', and a campaign being deleted is 'deleting'. Neither is
-- visible through the API nor dialled; both are purged in chunks (after a
-- crash too: the store resumes the purge when it opens).
ALTER TABLE campaigns ADD COLUMN visibility TEXT NOT NULL DEFAULT 'visible'
    CHECK (visibility IN ('importing', 'visible', 'deleting'));

-- The distinct contact timezones ("" = the campaign's), a JSON array written
-- once at import, so that the dialer never scans the contacts for them.
ALTER TABLE campaigns ADD COLUMN timezones TEXT NOT NULL DEFAULT '[""]';
UPDATE campaigns SET timezones = COALESCE(
    (SELECT json_group_array(tz) FROM (SELECT DISTINCT timezone AS tz FROM contacts
                                        WHERE campaign_id = campaigns.id ORDER BY tz)), '[]');

-- First attempts are queued lazily: a contact's first attempt is created
-- when the dialer is about to need it, a chunk at a time in row order
-- (store/queue.go), not at import, so that importing a million contacts
-- writes a million rows, not two million. Contacts with a row number above
-- queued_through_row have no attempt yet; last_row is the highest row.
ALTER TABLE campaigns ADD COLUMN last_row INTEGER NOT NULL DEFAULT 0;
ALTER TABLE campaigns ADD COLUMN queued_through_row INTEGER NOT NULL DEFAULT 0;
UPDATE campaigns SET last_row = COALESCE((SELECT MAX(row_number) FROM contacts WHERE campaign_id = campaigns.id), 0);
UPDATE campaigns SET queued_through_row = last_row;

-- Paging a campaign's calls by id, filtered or not, is an index range at
-- any depth. Rowid tables keep the rowid at the end of every index, so
-- (campaign_id) orders by id within a campaign, (campaign_id, state) by id
-- within a state. Outcomes exist only on finished attempts: a partial index
-- costs nothing at import.
CREATE INDEX call_attempts_campaign ON call_attempts (campaign_id);
CREATE INDEX call_attempts_campaign_state ON call_attempts (campaign_id, state);
CREATE INDEX call_attempts_campaign_outcome ON call_attempts (campaign_id, outcome) WHERE outcome IS NOT NULL;

-- Purging a campaign's logs in chunks.
CREATE INDEX campaigns_visibility ON campaigns (visibility) WHERE visibility != 'visible';
