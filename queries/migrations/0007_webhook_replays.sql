-- Replay keys of applied webhooks (Plivo and Vobiz nonces, Vonage JWT ids,
-- Telnyx signatures), hashed: a status whose key is here and not expired
-- was applied already, so a repeat is a no-op. A key is written in the
-- transaction that applies its status, so a repeat of a webhook whose
-- storing failed is applied; the table survives carrier swaps and restarts.
CREATE TABLE webhook_replays (
    key        BLOB    NOT NULL PRIMARY KEY,
    expires_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE INDEX webhook_replays_expiry ON webhook_replays (expires_at);
