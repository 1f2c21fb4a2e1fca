package wire

// The ranges of the compliance policy's abandonment fields (API.md 19), by
// the API's name of each. RecallAfterHoursRange ends at the longest recall
// hold the store remembers abandoned calls for (store.MaxRecallAfterHours).
var (
	AbandonAfterMsRange     = IntRange{0, 60000}   // abandonment.abandon_after_ms
	AbandonMaxRateRange     = FloatRange{0, 1}     // abandonment.max_rate
	AbandonWindowRange      = IntRange{1, 720}     // abandonment.window_hours
	AbandonMinAnsweredRange = IntRange{1, 1000000} // abandonment.min_answered
	RecallAfterHoursRange   = IntRange{0, 720}     // abandonment.recall_after_hours
)
