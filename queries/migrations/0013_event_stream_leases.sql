-- Which node holds a telephony configuration's event stream (API.md 16):
-- Asterisk hands a Stasis application to one websocket only, so of the
-- nodes sharing a database only the one holding a configuration's lease
-- opens its ARI events websocket, and follows every call placed through
-- it, whichever node placed it. Like campaign_leases: held until
-- expires_at (unix ms; 0: handed back), renewed well within its TTL, taken
-- by another node only once expired, and every take increments
-- generation. A node on SQLite (one node) takes no such lease.
CREATE TABLE event_stream_leases (
    telephony_configuration_id INTEGER NOT NULL PRIMARY KEY REFERENCES telephony_configs (id) ON DELETE CASCADE,
    node                       TEXT    NOT NULL,
    generation                 INTEGER NOT NULL,
    expires_at                 INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE INDEX event_stream_leases_node ON event_stream_leases (node);
