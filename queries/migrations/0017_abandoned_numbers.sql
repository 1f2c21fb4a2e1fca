-- The recall hold of the abandonment policy (API.md 19): per organization,
-- the numbers whose calls were abandoned and the answer of the newest such
-- call (unix milliseconds). Written in the transaction that ends the call
-- (whether the policy is enabled or not: the verdicts are measured either
-- way), read by every dispatch while the policy is enabled (one search of
-- the primary key), kept across the campaign's deletion like number_calls,
-- and forgotten once older than the longest recall_after_hours (720 h).
CREATE TABLE abandoned_numbers (
    organization_id INTEGER NOT NULL,
    phone_number    TEXT    NOT NULL,
    answered_at     INTEGER NOT NULL,
    attempt_id      INTEGER NOT NULL,
    PRIMARY KEY (organization_id, phone_number)
) STRICT, WITHOUT ROWID;

-- Forgetting abandoned calls older than any recall hold a policy may have.
CREATE INDEX abandoned_numbers_answered ON abandoned_numbers (answered_at);
