-- Organization-wide concurrency (API.md 19): at most max_concurrent_calls
-- calls of the organization dialing or in flight, counting every campaign
-- (NULL: no limit).
ALTER TABLE organizations ADD COLUMN max_concurrent_calls INTEGER;

-- The attempts dialing or in flight, few at any time (the campaigns'
-- concurrency): a claim under an organization's limit counts its
-- organization's from here.
CREATE INDEX call_attempts_active ON call_attempts (campaign_id) WHERE state IN ('dialing', 'in_flight');
