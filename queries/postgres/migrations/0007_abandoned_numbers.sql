-- The recall hold of the abandonment policy (API.md 19): see SQLite's
-- 0017_abandoned_numbers.sql; the same columns in the same order.

CREATE TABLE abandoned_numbers (
    organization_id BIGINT NOT NULL,
    phone_number    TEXT   NOT NULL,
    answered_at     BIGINT NOT NULL,
    attempt_id      BIGINT NOT NULL,
    PRIMARY KEY (organization_id, phone_number)
);

CREATE INDEX abandoned_numbers_answered ON abandoned_numbers (answered_at);
