package wire

// Problem is one entry of a 422 body (API.md 0.1, docs/api.md 0.3), shaped
// like a pydantic v2 error so FastAPI clients keep working: loc, msg, type,
// input and, for some types, ctx. Column is ours: the CSV column a problem
// of an uploaded file is about (the phone_number column a row's number is
// read from, the column a template variable names, a repeated header
// name), absent when the problem concerns no column.
type Problem struct {
	Loc    []any          `json:"loc"`
	Msg    string         `json:"msg"`
	Type   string         `json:"type"`
	Input  any            `json:"input"`
	Ctx    map[string]any `json:"ctx,omitempty"`
	Column string         `json:"column,omitempty"`
}
