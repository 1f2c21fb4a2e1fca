-- Campaigns, their contacts, call attempts (the dialer's durable queue) and
-- logs. Counters live on the campaign row and change in the same transaction
-- as the rows they count, so reading a campaign is one row.

CREATE TABLE campaigns (
    id                         INTEGER PRIMARY KEY AUTOINCREMENT,
    organization_id            INTEGER NOT NULL REFERENCES organizations (id),
    name                       TEXT    NOT NULL,
    -- No foreign keys to the workflow and the configuration: a finished
    -- campaign outlives them (it keeps the workflow's name and definition,
    -- and the configuration's name).
    workflow_id                INTEGER NOT NULL,
    workflow_name              TEXT    NOT NULL,
    workflow_definition        TEXT    NOT NULL,
    telephony_configuration_id INTEGER NOT NULL,
    config_name_at_create      TEXT    NOT NULL DEFAULT '',
    state                      TEXT    NOT NULL DEFAULT 'draft'
        CHECK (state IN ('draft', 'running', 'paused', 'completed', 'cancelled', 'failed')),
    source_type                TEXT    NOT NULL DEFAULT 'csv' CHECK (source_type IN ('csv')),
    source_id                  TEXT    NOT NULL,
    columns                    TEXT    NOT NULL DEFAULT '[]',
    default_country            TEXT,
    retry_config               TEXT    NOT NULL,
    schedule_config            TEXT,
    circuit_breaker            TEXT    NOT NULL,
    max_concurrency            INTEGER NOT NULL CHECK (max_concurrency BETWEEN 1 AND 1000),
    rate_limit_per_second      REAL    NOT NULL,
    total_rows                 INTEGER NOT NULL DEFAULT 0,
    processed_rows             INTEGER NOT NULL DEFAULT 0,
    failed_rows                INTEGER NOT NULL DEFAULT 0,
    executed_count             INTEGER NOT NULL DEFAULT 0,
    total_queued_count         INTEGER NOT NULL DEFAULT 0,
    parent_campaign_id         INTEGER REFERENCES campaigns (id),
    redialed_campaign_id       INTEGER REFERENCES campaigns (id),
    next_dial_at               INTEGER,
    breaker_reset_at           INTEGER NOT NULL DEFAULT 0,
    created_at                 INTEGER NOT NULL,
    updated_at                 INTEGER NOT NULL,
    started_at                 INTEGER,
    completed_at               INTEGER,
    cancelled_at               INTEGER
) STRICT;

CREATE INDEX campaigns_org ON campaigns (organization_id, id);
CREATE INDEX campaigns_state ON campaigns (state);

CREATE TABLE contacts (
    id               INTEGER PRIMARY KEY,
    campaign_id      INTEGER NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    row_number       INTEGER NOT NULL,
    phone_number     TEXT    NOT NULL,
    timezone         TEXT    NOT NULL DEFAULT '',
    context          TEXT    NOT NULL,
    is_final         INTEGER NOT NULL DEFAULT 0 CHECK (is_final IN (0, 1)),
    outcome          TEXT,
    attempts         INTEGER NOT NULL DEFAULT 0,
    last_call_at     INTEGER,
    duration_seconds INTEGER,
    answered_by      TEXT,
    UNIQUE (campaign_id, row_number)
) STRICT;

CREATE TABLE call_attempts (
    id               INTEGER PRIMARY KEY,
    campaign_id      INTEGER NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    contact_id       INTEGER NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
    contact_row      INTEGER NOT NULL,
    attempt          INTEGER NOT NULL,
    -- queued: waiting to be dialled; dialing: claimed, the provider request
    -- may be under way; in_flight: placed at the provider; done: final.
    state            TEXT    NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'dialing', 'in_flight', 'done')),
    -- 0 for retries (dialled first), 1 for first attempts.
    priority         INTEGER NOT NULL,
    due_at           INTEGER NOT NULL,
    timezone         TEXT    NOT NULL DEFAULT '',
    phone_number     TEXT    NOT NULL,
    outcome          TEXT CHECK (outcome IN ('answered', 'voicemail', 'busy', 'no_answer', 'failed', 'canceled', 'unknown')),
    raw_status       TEXT,
    provider_call_id TEXT,
    caller_id        TEXT,
    answered_by      TEXT,
    error            TEXT,
    sequence         INTEGER NOT NULL DEFAULT 0,
    started_at       INTEGER,
    answered_at      INTEGER,
    ended_at         INTEGER,
    deadline_at      INTEGER,
    duration_seconds INTEGER,
    UNIQUE (contact_id, attempt)
) STRICT;

CREATE INDEX call_attempts_queue ON call_attempts (campaign_id, state, priority, due_at, contact_row);
CREATE INDEX call_attempts_provider ON call_attempts (provider_call_id) WHERE provider_call_id IS NOT NULL;

CREATE TABLE campaign_logs (
    id          INTEGER PRIMARY KEY,
    campaign_id INTEGER NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    ts          INTEGER NOT NULL,
    level       TEXT    NOT NULL CHECK (level IN ('info', 'warning', 'error')),
    event       TEXT    NOT NULL,
    message     TEXT    NOT NULL,
    details     TEXT    NOT NULL DEFAULT '{}'
) STRICT;

CREATE INDEX campaign_logs_campaign ON campaign_logs (campaign_id, id);

-- The last-used time of a caller id, for least-recently-used rotation.
CREATE INDEX phone_numbers_rotation ON phone_numbers (telephony_configuration_id, is_active, last_used_at);
