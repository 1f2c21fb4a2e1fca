-- Organizations, API keys, telephony configurations and their phone numbers.
-- Times are INTEGER unix milliseconds; booleans are INTEGER 0/1 with CHECKs.

CREATE TABLE organizations (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE api_keys (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    organization_id INTEGER NOT NULL REFERENCES organizations (id),
    name            TEXT    NOT NULL DEFAULT '',
    prefix          TEXT    NOT NULL,
    key_hash        BLOB    NOT NULL UNIQUE,
    created_at      INTEGER NOT NULL,
    revoked_at      INTEGER
) STRICT;

CREATE TABLE telephony_configs (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    organization_id     INTEGER NOT NULL REFERENCES organizations (id),
    name                TEXT    NOT NULL,
    provider            TEXT    NOT NULL CHECK (provider IN ('ari', 'cloudonix', 'plivo', 'telnyx', 'twilio', 'vobiz', 'vonage')),
    is_default_outbound INTEGER NOT NULL DEFAULT 0 CHECK (is_default_outbound IN (0, 1)),
    credentials         BLOB    NOT NULL,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    UNIQUE (organization_id, name)
) STRICT;

CREATE UNIQUE INDEX telephony_configs_one_default
    ON telephony_configs (organization_id) WHERE is_default_outbound = 1;

CREATE TABLE phone_numbers (
    id                         INTEGER PRIMARY KEY AUTOINCREMENT,
    organization_id            INTEGER NOT NULL REFERENCES organizations (id),
    telephony_configuration_id INTEGER NOT NULL REFERENCES telephony_configs (id) ON DELETE CASCADE,
    address                    TEXT    NOT NULL,
    address_normalized         TEXT    NOT NULL,
    address_type               TEXT    NOT NULL CHECK (address_type IN ('pstn', 'sip_uri', 'sip_extension')),
    country_code               TEXT,
    label                      TEXT,
    is_active                  INTEGER NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1)),
    is_default_caller_id       INTEGER NOT NULL DEFAULT 0 CHECK (is_default_caller_id IN (0, 1)),
    last_used_at               INTEGER,
    created_at                 INTEGER NOT NULL,
    updated_at                 INTEGER NOT NULL,
    UNIQUE (organization_id, address_normalized)
) STRICT;

CREATE INDEX phone_numbers_config ON phone_numbers (telephony_configuration_id);

CREATE UNIQUE INDEX phone_numbers_one_default
    ON phone_numbers (telephony_configuration_id) WHERE is_default_caller_id = 1;
