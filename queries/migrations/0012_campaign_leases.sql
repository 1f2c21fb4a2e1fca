-- Which node dials a running campaign (API.md 16). A node holds a
-- campaign's lease until expires_at (unix ms; 0: handed back) and renews it
-- well within its TTL; another node takes it only once it has expired, and
-- every take increments generation. Claims and the writes about a
-- placement check, in their own transaction, that the lease still has the
-- generation the node took (a fencing token), so a node that lost the lease
-- cannot claim or place one more call. On one host the table holds one
-- node's leases, taken back at once after a restart under the same name.
CREATE TABLE campaign_leases (
    campaign_id INTEGER NOT NULL PRIMARY KEY REFERENCES campaigns (id) ON DELETE CASCADE,
    node        TEXT    NOT NULL,
    generation  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE INDEX campaign_leases_node ON campaign_leases (node);
