package queries

// The one statement sqlc cannot express: a multi-row VALUES list. A chunk
// of an import inserts its contacts with a few statements of many rows each
// instead of one round trip through database/sql per contact
// (store/import.go builds the statement for a given row count once).
const (
	// InsertContactsPrefix starts the statement; ContactValues is repeated
	// once per row, comma-separated.
	InsertContactsPrefix = "INSERT INTO contacts (campaign_id, row_number, phone_number, timezone, context) VALUES "
	// ContactValues is one contact's placeholders: campaign_id, row_number,
	// phone_number, timezone, context.
	ContactValues = "(?, ?, ?, ?, ?)"
)
