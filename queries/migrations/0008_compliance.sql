-- Compliance guard rails (API.md section 12): the do-not-call list, the
-- organization's policy (calling hours, attempt cap) with its change log,
-- the placements the attempt cap counts, and the evidence every attempt
-- keeps of what the checks saw.

-- One row per suppressed number of an organization. The unique index is the
-- lookup the dialer makes before every provider request: one B-tree search,
-- also with 10,000,000 entries. expires_at NULL: never expires.
CREATE TABLE suppressions (
    id              INTEGER PRIMARY KEY,
    organization_id INTEGER NOT NULL REFERENCES organizations (id),
    phone_number    TEXT    NOT NULL,
    reason          TEXT    NOT NULL DEFAULT '',
    -- api, csv, or opt_out:<attempt id>
    source          TEXT    NOT NULL,
    created_at      INTEGER NOT NULL,
    expires_at      INTEGER,
    UNIQUE (organization_id, phone_number)
) STRICT;

-- Paging an organization's list by id.
CREATE INDEX suppressions_org ON suppressions (organization_id);

-- The organization's policy; no row: the defaults, version 1. Every change
-- increments version and appends to compliance_policy_changes in the same
-- transaction.
CREATE TABLE compliance_policies (
    organization_id INTEGER PRIMARY KEY REFERENCES organizations (id),
    version         INTEGER NOT NULL,
    policy          TEXT    NOT NULL,
    updated_at      INTEGER NOT NULL
) STRICT;

CREATE TABLE compliance_policy_changes (
    id              INTEGER PRIMARY KEY,
    organization_id INTEGER NOT NULL REFERENCES organizations (id),
    version         INTEGER NOT NULL,
    changed_at      INTEGER NOT NULL,
    api_key_id      INTEGER,
    -- {"<field path>": {"from": ..., "to": ...}}
    changes         TEXT    NOT NULL
) STRICT;

CREATE INDEX compliance_policy_changes_org ON compliance_policy_changes (organization_id, id);

-- Calls placed (or reserved right before their request) per number, across
-- the organization's campaigns, for the attempt cap (12.3). Kept apart from
-- the attempts so that deleting a campaign does not reset a number's count.
CREATE TABLE number_calls (
    organization_id INTEGER NOT NULL,
    phone_number    TEXT    NOT NULL,
    attempt_id      INTEGER NOT NULL,
    placed_at       INTEGER NOT NULL,
    PRIMARY KEY (organization_id, phone_number, attempt_id)
) STRICT, WITHOUT ROWID;

-- Forgetting placements older than any window a policy may have.
CREATE INDEX number_calls_placed ON number_calls (placed_at);

-- The time-zone sets of a campaign's contacts that have no timezone column:
-- {"~<key>": ["America/Chicago", ...]} from libphonenumber's data, written at
-- import. contacts.timezone and call_attempts.timezone hold the contact's
-- timezone column, else the key of its number's zone set, else "".
ALTER TABLE campaigns ADD COLUMN zone_sets TEXT NOT NULL DEFAULT '{}';

-- call_attempts gains the outcome 'suppressed' (a CHECK cannot be altered in
-- SQLite: the table is rebuilt) and the compliance evidence (12.5).
CREATE TABLE call_attempts_new (
    id               INTEGER PRIMARY KEY,
    campaign_id      INTEGER NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    contact_id       INTEGER NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
    contact_row      INTEGER NOT NULL,
    attempt          INTEGER NOT NULL,
    state            TEXT    NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'dialing', 'in_flight', 'done')),
    priority         INTEGER NOT NULL,
    due_at           INTEGER NOT NULL,
    timezone         TEXT    NOT NULL DEFAULT '',
    phone_number     TEXT    NOT NULL,
    outcome          TEXT CHECK (outcome IN ('answered', 'voicemail', 'busy', 'no_answer', 'failed', 'canceled', 'unknown', 'suppressed')),
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
    executed         INTEGER NOT NULL DEFAULT 0 CHECK (executed IN (0, 1)),
    -- What the guard rails saw when the attempt was last placed or held
    -- (JSON, API.md 12.5); NULL until then.
    compliance       TEXT,
    UNIQUE (contact_id, attempt)
) STRICT;

INSERT INTO call_attempts_new (id, campaign_id, contact_id, contact_row, attempt, state, priority, due_at, timezone,
    phone_number, outcome, raw_status, provider_call_id, caller_id, answered_by, error, sequence, started_at,
    answered_at, ended_at, deadline_at, duration_seconds, executed)
SELECT id, campaign_id, contact_id, contact_row, attempt, state, priority, due_at, timezone,
    phone_number, outcome, raw_status, provider_call_id, caller_id, answered_by, error, sequence, started_at,
    answered_at, ended_at, deadline_at, duration_seconds, executed
FROM call_attempts;

DROP TABLE call_attempts;
ALTER TABLE call_attempts_new RENAME TO call_attempts;

CREATE INDEX call_attempts_queue ON call_attempts (campaign_id, state, priority, due_at, contact_row);
CREATE INDEX call_attempts_provider ON call_attempts (provider_call_id) WHERE provider_call_id IS NOT NULL;
CREATE INDEX call_attempts_campaign ON call_attempts (campaign_id);
CREATE INDEX call_attempts_campaign_state ON call_attempts (campaign_id, state);
CREATE INDEX call_attempts_campaign_outcome ON call_attempts (campaign_id, outcome) WHERE outcome IS NOT NULL;
