-- Which node holds a telephony configuration's event stream (API.md 16):
-- see SQLite's 0013_event_stream_leases.sql.
CREATE TABLE event_stream_leases (
    telephony_configuration_id BIGINT NOT NULL PRIMARY KEY REFERENCES telephony_configs (id) ON DELETE CASCADE,
    node                       TEXT   NOT NULL,
    generation                 BIGINT NOT NULL,
    expires_at                 BIGINT NOT NULL
);

CREATE INDEX event_stream_leases_node ON event_stream_leases (node);
