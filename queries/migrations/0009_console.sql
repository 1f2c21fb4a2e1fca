-- The console's sign-in (API.md 14): sessions made from an API key, and
-- one-time sign-in links. Tokens are stored only as their SHA-256; a
-- session or link stops working at once when its API key is revoked (the
-- lookups join on api_keys.revoked_at IS NULL). Times are unix milliseconds.

-- One row per signed-in browser. expires_at is last_seen_at plus the idle
-- timeout (12 h), moved forward as the session is used (at most once a
-- minute). csrf_token is what the console's pages send back in forms and in
-- the X-CSRF-Token header of the API requests that change something.
CREATE TABLE console_sessions (
    id              INTEGER PRIMARY KEY,
    token_hash      BLOB    NOT NULL UNIQUE,
    csrf_token      TEXT    NOT NULL,
    api_key_id      INTEGER NOT NULL REFERENCES api_keys (id),
    organization_id INTEGER NOT NULL REFERENCES organizations (id),
    created_at      INTEGER NOT NULL,
    last_seen_at    INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL
) STRICT;

-- The sweep of expired sessions.
CREATE INDEX console_sessions_expires ON console_sessions (expires_at);

-- One-time sign-in links (outdial demo prints one): redeemed once, before
-- expires_at, while the key is not revoked; used_at marks the redemption.
CREATE TABLE console_sign_in_links (
    id              INTEGER PRIMARY KEY,
    token_hash      BLOB    NOT NULL UNIQUE,
    api_key_id      INTEGER NOT NULL REFERENCES api_keys (id),
    organization_id INTEGER NOT NULL REFERENCES organizations (id),
    created_at      INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL,
    used_at         INTEGER
) STRICT;

CREATE INDEX console_sign_in_links_expires ON console_sign_in_links (expires_at);
