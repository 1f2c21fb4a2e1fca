-- People, roles and an audit trail (API.md 17). Times are unix
-- milliseconds; booleans are 0/1.

-- An admin may require a second factor of every user of the organization.
ALTER TABLE organizations ADD COLUMN require_totp INTEGER NOT NULL DEFAULT 0 CHECK (require_totp IN (0, 1));

-- Keys carry a role; the keys made before roles existed were full admins
-- and stay so. last_used_at is touched by authentication at most once a
-- minute.
ALTER TABLE api_keys ADD COLUMN role TEXT NOT NULL DEFAULT 'admin' CHECK (role IN ('viewer', 'operator', 'admin'));
ALTER TABLE api_keys ADD COLUMN last_used_at INTEGER;

-- The people of an organization. Sign-in has only an email, so an email is
-- unique across all organizations, compared case-insensitively through
-- email_key (its lower-case form). password_hash is the argon2id string the
-- caller made (NULL until a password is set); totp_secret and totp_pending
-- (an enrollment not yet confirmed) are sealed with the row's id as
-- associated data. totp_last_step is the last TOTP time step accepted: a
-- code is accepted only for a later step, so each works once. A deleted
-- user's row is deleted, with its sessions, links and recovery codes.
CREATE TABLE users (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    organization_id INTEGER NOT NULL REFERENCES organizations (id),
    email           TEXT    NOT NULL,
    email_key       TEXT    NOT NULL UNIQUE,
    role            TEXT    NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
    disabled        INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
    password_hash   TEXT,
    totp_secret     BLOB,
    totp_pending    BLOB,
    totp_enabled    INTEGER NOT NULL DEFAULT 0 CHECK (totp_enabled IN (0, 1)),
    totp_last_step  INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
) STRICT;

CREATE INDEX users_org ON users (organization_id, id);

-- One-time links that set a user's password (outdial user create, POST
-- /users): valid until expires_at (24 h) or until used (used_at). Kept a
-- while after expiry so that a used or expired link says so.
CREATE TABLE password_links (
    id         INTEGER PRIMARY KEY,
    token_hash BLOB    NOT NULL UNIQUE,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
) STRICT;

CREATE INDEX password_links_expires ON password_links (expires_at);
CREATE INDEX password_links_user ON password_links (user_id);

-- The SHA-256 of each unused recovery code of a user's second factor.
CREATE TABLE recovery_codes (
    user_id   INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash BLOB    NOT NULL,
    PRIMARY KEY (user_id, code_hash)
) STRICT, WITHOUT ROWID;

-- Failed sign-ins of the last 15 minutes, per email (email_key, as in
-- users, whether or not a user has it) and peer address: the throttle
-- counts them on every node.
CREATE TABLE sign_in_failures (
    id        INTEGER PRIMARY KEY,
    email_key TEXT    NOT NULL,
    address   TEXT    NOT NULL,
    at        INTEGER NOT NULL
) STRICT;

CREATE INDEX sign_in_failures_email ON sign_in_failures (email_key, at);
CREATE INDEX sign_in_failures_address ON sign_in_failures (address, at);
CREATE INDEX sign_in_failures_at ON sign_in_failures (at);

-- Console sessions are made from a key (api_key_id) or by a user
-- (user_id), never both. second_factor_pending marks a session made after
-- a user's correct password when a second factor is still to come: it may
-- only complete it. SQLite cannot drop a NOT NULL, so the table is made
-- again (same columns, in PostgreSQL's order) and its rows copied.
CREATE TABLE console_sessions_new (
    id                    INTEGER PRIMARY KEY,
    token_hash            BLOB    NOT NULL UNIQUE,
    csrf_token            TEXT    NOT NULL,
    api_key_id            INTEGER REFERENCES api_keys (id),
    organization_id       INTEGER NOT NULL REFERENCES organizations (id),
    created_at            INTEGER NOT NULL,
    last_seen_at          INTEGER NOT NULL,
    expires_at            INTEGER NOT NULL,
    user_id               INTEGER REFERENCES users (id) ON DELETE CASCADE,
    second_factor_pending INTEGER NOT NULL DEFAULT 0 CHECK (second_factor_pending IN (0, 1)),
    CHECK ((api_key_id IS NULL) <> (user_id IS NULL))
) STRICT;

INSERT INTO console_sessions_new (id, token_hash, csrf_token, api_key_id, organization_id, created_at, last_seen_at, expires_at)
SELECT id, token_hash, csrf_token, api_key_id, organization_id, created_at, last_seen_at, expires_at FROM console_sessions;

DROP TABLE console_sessions;
ALTER TABLE console_sessions_new RENAME TO console_sessions;

CREATE INDEX console_sessions_expires ON console_sessions (expires_at);
CREATE INDEX console_sessions_key ON console_sessions (api_key_id);
CREATE INDEX console_sessions_user ON console_sessions (user_id);

-- The audit trail: one row per request that changes something (or tried
-- to), never updated; deleted only by retention (at). actor_type is
-- 'user' or 'api_key'; actor_name is the user's email or the key's name
-- at the time. changes is JSON text.
CREATE TABLE audit_entries (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    organization_id INTEGER NOT NULL REFERENCES organizations (id),
    at              INTEGER NOT NULL,
    actor_type      TEXT    NOT NULL CHECK (actor_type IN ('user', 'api_key')),
    actor_id        INTEGER NOT NULL,
    actor_name      TEXT    NOT NULL,
    action          TEXT    NOT NULL,
    method          TEXT    NOT NULL,
    route           TEXT    NOT NULL,
    target_type     TEXT    NOT NULL,
    target_id       INTEGER,
    changes         TEXT    NOT NULL,
    status          INTEGER NOT NULL,
    address         TEXT    NOT NULL
) STRICT;

CREATE INDEX audit_entries_org ON audit_entries (organization_id, id);
CREATE INDEX audit_entries_at ON audit_entries (at);

-- The compliance policy's change log (API.md 12.5) becomes part of the
-- trail: each change so far as a compliance_policy.update by its key
-- (or, when none was recorded, by "before audit", id 0).
INSERT INTO audit_entries (organization_id, at, actor_type, actor_id, actor_name, action, method, route,
                           target_type, target_id, changes, status, address)
SELECT c.organization_id, c.changed_at, 'api_key', COALESCE(c.api_key_id, 0), COALESCE(k.name, 'before audit'),
       'compliance_policy.update', 'PUT', '/api/v1/organizations/compliance', 'compliance_policy', NULL,
       c.changes, 200, ''
FROM compliance_policy_changes c LEFT JOIN api_keys k ON k.id = c.api_key_id
ORDER BY c.id;
