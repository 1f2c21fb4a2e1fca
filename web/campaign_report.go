package web

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/outdial/outdial/dialer/contacts"
)

// campaignReport streams a CSV with one row per contact: the original
// columns, then outcome, attempts, last_call_at, duration_seconds,
// answered_by, suppression and local_time from the guard rails' evidence
// of the contact's newest attempt that has any (API.md 12.5; empty when
// none), and abandoned (true/false) and answer_to_first_audio_ms of its
// newest attempt (API.md 19; empty when null). Every header and cell goes through spreadsheetSafe.
// HEAD answers the headers only, without reading the contacts.
func (s *Server) campaignReport(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	id, err := pathID(ps, "campaign_id")
	if err != nil {
		return err
	}
	c, err := s.db.GetCampaign(r.Context(), org, id)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="campaign-`+strconv.FormatInt(id, 10)+`-report.csv"`)
	if r.Method == http.MethodHead {
		// The same status and headers as a GET (a 200 whose rows are
		// streamed has no Content-Length), without reading the contacts.
		return nil
	}
	sent := &sentCounter{w: w}
	cw := csv.NewWriter(sent)
	header := append(append([]string{}, c.Columns...), "outcome", "attempts", "last_call_at", "duration_seconds", "answered_by",
		"suppression", "local_time", "abandoned", "answer_to_first_audio_ms")
	safeHeader := make([]string, len(header))
	for i, h := range header {
		safeHeader[i] = spreadsheetSafe(h)
	}
	if err := cw.Write(safeHeader); err != nil {
		return nil
	}
	var after int64
	for {
		page, err := s.db.ListContacts(r.Context(), id, after, 1000)
		if err != nil && sent.n == 0 {
			// Nothing reached the client yet: an ordinary error answer.
			w.Header().Del("Content-Disposition")
			return err
		}
		if err != nil {
			// A 200 is under way: end the response without its last
			// chunk, so the client sees a failed download rather than a
			// short file it would take for the whole report. A client
			// that went away is no error of ours (errors.go).
			level := slog.LevelError
			if clientClosed(r) {
				level = slog.LevelDebug
			}
			s.log.Log(context.WithoutCancel(r.Context()), level, "campaign report aborted", slog.Int64("campaign_id", id), slog.Int64("after_row", after),
				slog.String("error", err.Error()))
			panic(http.ErrAbortHandler)
		}
		for _, ct := range page {
			vars := map[string]string{}
			_ = json.Unmarshal(ct.Context, &vars)
			row := make([]string, 0, len(header))
			for _, col := range c.Columns {
				if strings.EqualFold(col, contacts.PhoneColumn) {
					row = append(row, phoneCell(ct.PhoneNumber))
				} else {
					row = append(row, spreadsheetSafe(vars[col]))
				}
			}
			// The result columns are ours (enums, integers, timestamps):
			// none can start with a formula character.
			row = append(row, deref(ct.Outcome), strconv.FormatInt(ct.Attempts, 10), derefTS(ct.LastCallAt), derefInt(ct.DurationSeconds), deref(ct.AnsweredBy))
			// The evidence is the dialer's JSON: its values are neutralised
			// like the CSV's own cells.
			var ev reportEvidence
			if len(ct.LastCompliance) > 0 {
				_ = json.Unmarshal(ct.LastCompliance, &ev)
			}
			row = append(row, spreadsheetSafe(ev.Suppression), spreadsheetSafe(ev.LocalTime), boolCell(ct.LastAbandoned),
				derefInt(ct.LastAnswerToFirstAudioMs))
			if err := cw.Write(row); err != nil {
				return nil
			}
			after = ct.Row
		}
		if len(page) < 1000 {
			break
		}
	}
	cw.Flush()
	return nil
}

// boolCell is true or false, or empty for null.
func boolCell(b *bool) string {
	if b == nil {
		return ""
	}
	return strconv.FormatBool(*b)
}

// reportEvidence is what the report shows of an attempt's evidence; a
// field that is absent or not a string is empty.
type reportEvidence struct {
	Suppression string `json:"suppression"`
	LocalTime   string `json:"local_time"`
}

// spreadsheetSafe neutralises a CSV cell that a spreadsheet would read as a
// formula (OWASP "CSV Injection"): a value starting with =, +, -, @, tab or
// carriage return gets a single quote in front, which spreadsheets take as
// "this cell is text" and do not show. encoding/csv then quotes the cell
// and doubles its quotes as RFC 4180 says, so a value cannot end its cell
// early and start a formula in the next one. A negative number (-12.50) is
// left as it is: it is a number, not a formula, and stays one in the
// spreadsheet.
func spreadsheetSafe(v string) string {
	if v == "" {
		return v
	}
	switch v[0] {
	case '=', '+', '@', '\t', '\r':
		return "'" + v
	case '-':
		if isNegativeNumber(v) {
			return v
		}
		return "'" + v
	}
	return v
}

// isNegativeNumber reports whether v is "-" then digits with at most one
// decimal point between digits (-7, -12.50).
func isNegativeNumber(v string) bool {
	digits, point := 0, false
	for i := 1; i < len(v); i++ {
		switch c := v[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !point && digits > 0 && i < len(v)-1:
			point = true
		default:
			return false
		}
	}
	return digits > 0
}

// phoneCell is a contact's number in the phone column: stored numbers are
// E.164 (+14155550100), which is data, not a formula, and is written as it
// is; anything else is neutralised like any other cell.
func phoneCell(v string) string {
	if isE164(v) {
		return v
	}
	return spreadsheetSafe(v)
}

// isE164 reports whether v is "+" then 2 to 15 digits, the first not 0.
func isE164(v string) bool {
	if len(v) < 3 || len(v) > 16 || v[0] != '+' || v[1] == '0' {
		return false
	}
	for i := 1; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// sentCounter counts the bytes written through it to the client.
type sentCounter struct {
	w http.ResponseWriter
	n int64
}

func (c *sentCounter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
