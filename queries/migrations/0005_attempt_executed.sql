-- executed_count counts a call once, whichever records it first: the
-- provider's answer to the place request (MarkPlaced), or, when that answer
-- was lost or could not be recorded, a final status from the provider for
-- an attempt still dialing. executed says it was counted.
ALTER TABLE call_attempts ADD COLUMN executed INTEGER NOT NULL DEFAULT 0 CHECK (executed IN (0, 1));
UPDATE call_attempts SET executed = 1 WHERE provider_call_id IS NOT NULL;
