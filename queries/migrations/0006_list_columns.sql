-- Lists read only what they return (issue 16 item 6). SQLite stores a row's
-- columns in order and a large value spills into a chain of overflow pages,
-- so reading any column *after* a large one walks that chain: listing 30
-- workflows of 1 MiB read 30 MiB to return their names, and a page of 200
-- campaigns, each carrying its 1 MiB copy of a workflow definition, read
-- 200 MiB to return their states and counters.

-- Workflow lists are answered from a covering index: the definitions are
-- never read.
CREATE INDEX workflows_list ON workflows (organization_id, id, name, created_at, updated_at);

-- A campaign's copy of its workflow's definition (read by the dialer, never
-- shown in the API) moves to its own table. DROP COLUMN rewrites the
-- campaigns rows in place (no cascade: the table is not dropped).
CREATE TABLE campaign_definitions (
    campaign_id INTEGER PRIMARY KEY REFERENCES campaigns (id) ON DELETE CASCADE,
    definition  TEXT    NOT NULL
) STRICT;
INSERT INTO campaign_definitions (campaign_id, definition) SELECT id, workflow_definition FROM campaigns;
ALTER TABLE campaigns DROP COLUMN workflow_definition;
