package web

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/outdial/outdial/dialer/phone"
	"github.com/outdial/outdial/store"
)

// The suppression list (API.md 12.1): an organization's numbers that are
// never called. Numbers are added from a list in the body (source api) or
// from an uploaded CSV (source csv, suppressions_csv.go), listed, and
// deleted one entry at a time. Every successful add waits, before it is
// answered, until no provider request that checked the list before the add
// is still under way (dialer.Engine.SuppressionsAdded): a number added while
// a campaign runs is never called after the add answered.

// maxSuppressNumbers is the most numbers one POST /suppressions takes.
const maxSuppressNumbers = 10_000

// maxListedInvalid bounds the numbers or rows listed in "invalid".
const maxListedInvalid = 100

// suppressionJSON is one entry of the list.
type suppressionJSON struct {
	ID          int64   `json:"id"`
	PhoneNumber string  `json:"phone_number"`
	Reason      string  `json:"reason"`
	Source      string  `json:"source"`
	CreatedAt   string  `json:"created_at"`
	ExpiresAt   *string `json:"expires_at"`
}

func suppressionOut(s store.Suppression) suppressionJSON {
	return suppressionJSON{ID: s.ID, PhoneNumber: s.PhoneNumber, Reason: s.Reason, Source: s.Source,
		CreatedAt: ts(s.CreatedAt), ExpiresAt: optTS(s.ExpiresAt)}
}

// invalidEntryJSON is a number of the body (index, from 0) or a row of the
// CSV (row, header = 1) that was not added, with why.
type invalidEntryJSON struct {
	Index *int   `json:"index,omitempty"`
	Row   *int   `json:"row,omitempty"`
	Type  string `json:"type"`
	Input any    `json:"input"`
	Msg   string `json:"msg"`
}

// suppressResultJSON is the answer of POST /suppressions. Invalid lists the
// first maxListedInvalid numbers or rows that were not added; InvalidCount
// counts them all.
type suppressResultJSON struct {
	Added          int                `json:"added"`
	AlreadyPresent int                `json:"already_present"`
	Invalid        []invalidEntryJSON `json:"invalid"`
	InvalidCount   int                `json:"invalid_count"`
}

// addInvalid counts e and lists it while fewer than maxListedInvalid are.
func (res *suppressResultJSON) addInvalid(e invalidEntryJSON) {
	res.InvalidCount++
	if len(res.Invalid) < maxListedInvalid {
		res.Invalid = append(res.Invalid, e)
	}
}

// addSuppressions adds the body's numbers, or the numbers of the uploaded
// CSV it names, to the organization's list.
func (s *Server) addSuppressions(w http.ResponseWriter, r *http.Request, _ httprouter.Params, org int64) error {
	body, err := readJSONObject(r)
	if err != nil {
		return err
	}
	var p Problems
	f := fields{obj: body, loc: []any{"body"}, p: &p}
	var ns store.NewSuppressions
	if reason, present, ok := f.Name("reason", false, true, 0, 255); present && ok {
		ns.Reason = reason
	}
	ns.ExpiresAt = readExpiresAt(f, s.db.Now())
	hasNumbers, hasSource := body["numbers"] != nil, body["source_id"] != nil
	var list []any
	var source string
	switch {
	case hasNumbers && hasSource:
		p.Add([]any{"body"}, "value_error", "Value error, send either numbers or source_id, not both", nil, nil)
	case hasNumbers:
		list = readNumberList(f)
	case hasSource:
		source, _, _ = f.String("source_id", true, false, 1, 1024)
	default:
		p.Add([]any{"body", "numbers"}, "missing",
			"Field required: send numbers (a list of phone numbers) or source_id (the file_key of an uploaded CSV)", body, nil)
	}
	if err := p.Err(); err != nil {
		return err
	}
	var out suppressResultJSON
	if hasNumbers {
		ns.Source = store.SourceAPI
		out, err = s.suppressNumbers(r.Context(), org, ns, list)
	} else {
		ns.Source = store.SourceCSV
		out, err = s.importSuppressions(r.Context(), org, ns, source)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// readNumberList checks that numbers is a list of 1..maxSuppressNumbers
// strings; a number that is a string but not a phone number is not a
// problem here (it is reported in the answer's invalid list).
func readNumberList(f fields) []any {
	loc := at(f.loc, "numbers")
	v := f.obj["numbers"]
	list, isList := v.([]any)
	if !isList {
		f.p.Add(loc, "list_type", "Input should be a valid list", v, nil)
		return nil
	}
	if len(list) == 0 {
		f.p.Add(loc, "too_short", "List should have at least 1 item after validation, not 0", v,
			map[string]any{"field_type": "List", "min_length": 1, "actual_length": 0})
		return nil
	}
	if len(list) > maxSuppressNumbers {
		f.p.Add(loc, "too_long", fmt.Sprintf("List should have at most %d items after validation, not %d", maxSuppressNumbers, len(list)), nil,
			map[string]any{"field_type": "List", "max_length": maxSuppressNumbers, "actual_length": len(list)})
		return nil
	}
	for i, item := range list {
		if _, isStr := item.(string); !isStr {
			f.p.Add(at(loc, i), "string_type", "Input should be a valid string", item, nil)
		}
	}
	return list
}

// readExpiresAt reads the optional expires_at: an RFC 3339 time with its
// offset, after now. Absent or null: the entries never expire.
func readExpiresAt(f fields, now time.Time) *time.Time {
	v := f.obj["expires_at"]
	if v == nil {
		return nil
	}
	loc := at(f.loc, "expires_at")
	str, isStr := v.(string)
	if !isStr {
		f.p.Add(loc, "datetime_type", "Input should be a valid datetime", v, nil)
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, str)
	if err != nil {
		f.p.Add(loc, "datetime_from_date_parsing", "Input should be a valid datetime (RFC 3339 with an offset, e.g. 2027-01-31T00:00:00Z)", str, nil)
		return nil
	}
	if !t.After(now) {
		f.p.Add(loc, "datetime_future", "Input should be in the future", str, nil)
		return nil
	}
	t = t.UTC()
	return &t
}

// suppressNumbers normalises the numbers (strings, checked by
// readNumberList) like contacts, without a default country, and adds the
// valid ones in one transaction; the others are listed by index.
func (s *Server) suppressNumbers(ctx context.Context, org int64, ns store.NewSuppressions, list []any) (suppressResultJSON, error) {
	out := suppressResultJSON{Invalid: []invalidEntryJSON{}}
	numbers := make([]string, 0, len(list))
	for i, item := range list {
		raw := item.(string)
		n, err := phone.Normalize(raw, "")
		if err != nil {
			typ, msg := numberProblem(raw, err)
			out.addInvalid(invalidEntryJSON{Index: &i, Type: typ, Input: clipInput(raw), Msg: msg})
			continue
		}
		numbers = append(numbers, n)
	}
	if len(numbers) == 0 {
		return out, nil
	}
	res, err := s.db.AddSuppressions(ctx, org, ns, numbers)
	if err != nil {
		return suppressResultJSON{}, err
	}
	if res.Added > 0 {
		s.suppressionsAdded(ctx, org)
	}
	out.Added, out.AlreadyPresent = res.Added, res.AlreadyPresent
	return out, nil
}

// numberProblem is the type and message of a number phone.Normalize
// refused (err), for a list without a default country.
func numberProblem(raw string, err error) (typ, msg string) {
	switch {
	case errors.Is(err, phone.ErrEmpty):
		return "phone_missing", "the phone number is empty"
	case !strings.HasPrefix(strings.TrimSpace(raw), "+"):
		return "phone_invalid", "not a valid phone number: give it in E.164 form with its country code (+14155550100)"
	}
	return "phone_invalid", "not a valid phone number"
}

// maxInputEcho bounds the text of a number echoed in an invalid entry.
const maxInputEcho = 256

// clipInput cuts s to maxInputEcho bytes on a character boundary, marking
// the cut with "…".
func clipInput(s string) string {
	if len(s) <= maxInputEcho {
		return s
	}
	cut := maxInputEcho
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// suppressionsAdded tells the dialer that numbers were added to org's list
// and returns once no provider request that checked the list before is
// still under way.
func (s *Server) suppressionsAdded(ctx context.Context, org int64) {
	if s.dialer != nil {
		s.dialer.SuppressionsAdded(ctx, org)
	}
}

// listSuppressions lists the organization's entries by id, or the entry of
// one number (?number=, in any format a contact's number may have).
func (s *Server) listSuppressions(w http.ResponseWriter, r *http.Request, _ httprouter.Params, org int64) error {
	var p Problems
	limit := queryInt(&p, r, "limit", 100, 1, 1000)
	after := queryInt(&p, r, "after_id", 0, 0, math.MaxInt64)
	number := ""
	if raw := r.URL.Query().Get("number"); raw != "" {
		// An unencoded "+" arrives as a space (form decoding of the query).
		v := raw
		if strings.HasPrefix(v, " ") {
			v = "+" + strings.TrimLeft(v, " ")
		}
		n, err := phone.Normalize(v, "")
		if err != nil {
			typ, msg := numberProblem(v, err)
			p.Add([]any{"query", "number"}, typ, "Value error, "+msg, raw, nil)
		}
		number = n
	}
	if err := p.Err(); err != nil {
		return err
	}
	list, err := s.db.ListSuppressions(r.Context(), org, number, after, int(limit))
	if err != nil {
		return err
	}
	out := make([]suppressionJSON, len(list))
	for i, e := range list {
		out[i] = suppressionOut(e)
	}
	writeJSON(w, http.StatusOK, map[string]any{"suppressions": out})
	return nil
}

// deleteSuppression removes one entry: its number may be called again.
func (s *Server) deleteSuppression(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	id, err := pathID(ps, "suppression_id")
	if err != nil {
		return err
	}
	if err := s.db.DeleteSuppression(r.Context(), org, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
