-- Organization-wide concurrency (API.md 19): see queries/migrations/0016_organization_limits.sql.
ALTER TABLE organizations ADD COLUMN max_concurrent_calls BIGINT;

CREATE INDEX call_attempts_active ON call_attempts (campaign_id) WHERE state IN ('dialing', 'in_flight');
