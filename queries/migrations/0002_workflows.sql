-- Workflow definitions. The definition is kept as the exact JSON text the
-- client sent, so unknown keys survive byte for byte.

CREATE TABLE workflows (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    organization_id INTEGER NOT NULL REFERENCES organizations (id),
    name            TEXT    NOT NULL,
    definition      TEXT    NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    UNIQUE (organization_id, name)
) STRICT;
