-- Which node dials a running campaign (API.md 16): see SQLite's
-- 0012_campaign_leases.sql.
CREATE TABLE campaign_leases (
    campaign_id BIGINT NOT NULL PRIMARY KEY REFERENCES campaigns (id) ON DELETE CASCADE,
    node        TEXT   NOT NULL,
    generation  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
);

CREATE INDEX campaign_leases_node ON campaign_leases (node);
