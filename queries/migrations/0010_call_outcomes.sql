-- Calls ended per outcome, kept on the campaign like its other counters
-- (API.md 10: the snapshot's outcomes). Counted in the transaction that ends
-- the attempt (AddCampaignCounts), so a snapshot reads eight columns of one
-- row instead of counting a million attempts.
ALTER TABLE campaigns ADD COLUMN calls_answered   INTEGER NOT NULL DEFAULT 0;
ALTER TABLE campaigns ADD COLUMN calls_voicemail  INTEGER NOT NULL DEFAULT 0;
ALTER TABLE campaigns ADD COLUMN calls_busy       INTEGER NOT NULL DEFAULT 0;
ALTER TABLE campaigns ADD COLUMN calls_no_answer  INTEGER NOT NULL DEFAULT 0;
ALTER TABLE campaigns ADD COLUMN calls_failed     INTEGER NOT NULL DEFAULT 0;
ALTER TABLE campaigns ADD COLUMN calls_canceled   INTEGER NOT NULL DEFAULT 0;
ALTER TABLE campaigns ADD COLUMN calls_unknown    INTEGER NOT NULL DEFAULT 0;
ALTER TABLE campaigns ADD COLUMN calls_suppressed INTEGER NOT NULL DEFAULT 0;

-- Campaigns from before: counted once from their attempts.
UPDATE campaigns SET
    calls_answered   = (SELECT count(*) FROM call_attempts a WHERE a.campaign_id = campaigns.id AND a.outcome = 'answered'),
    calls_voicemail  = (SELECT count(*) FROM call_attempts a WHERE a.campaign_id = campaigns.id AND a.outcome = 'voicemail'),
    calls_busy       = (SELECT count(*) FROM call_attempts a WHERE a.campaign_id = campaigns.id AND a.outcome = 'busy'),
    calls_no_answer  = (SELECT count(*) FROM call_attempts a WHERE a.campaign_id = campaigns.id AND a.outcome = 'no_answer'),
    calls_failed     = (SELECT count(*) FROM call_attempts a WHERE a.campaign_id = campaigns.id AND a.outcome = 'failed'),
    calls_canceled   = (SELECT count(*) FROM call_attempts a WHERE a.campaign_id = campaigns.id AND a.outcome = 'canceled'),
    calls_unknown    = (SELECT count(*) FROM call_attempts a WHERE a.campaign_id = campaigns.id AND a.outcome = 'unknown'),
    calls_suppressed = (SELECT count(*) FROM call_attempts a WHERE a.campaign_id = campaigns.id AND a.outcome = 'suppressed');
