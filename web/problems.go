package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/outdial/outdial/web/wire"
)

// Problem is one entry of a 422 body (wire.Problem: loc, msg, type, input,
// and optionally ctx and column).
type Problem = wire.Problem

// Problems collects every problem of one request; a handler checks all
// fields, then answers 422 when the list is not empty.
type Problems []Problem

// ValidationError is a non-empty Problems list used as an error.
type ValidationError struct{ Problems Problems }

func (e *ValidationError) Error() string {
	return fmt.Sprintf("%d validation problems", len(e.Problems))
}

// Err returns a *ValidationError when there are problems, else nil.
func (p Problems) Err() error {
	if len(p) == 0 {
		return nil
	}
	return &ValidationError{Problems: p}
}

// Add appends a problem. loc is copied.
func (p *Problems) Add(loc []any, typ, msg string, input any, ctx map[string]any) {
	*p = append(*p, Problem{Loc: append([]any(nil), loc...), Msg: msg, Type: typ, Input: input, Ctx: ctx})
}

// at returns loc extended by more, never sharing loc's backing array.
func at(loc []any, more ...any) []any {
	out := make([]any, 0, len(loc)+len(more))
	return append(append(out, loc...), more...)
}

// maxBodyBytes bounds a JSON request body.
const maxBodyBytes = 8 << 20

var errBodyTooLarge = errors.New("request body too large")

// readJSONObject reads the request body as one JSON object. A missing body is
// `missing`, invalid JSON is `json_invalid` (loc ["body", byte offset]) and a
// JSON value that is not an object is `model_type`. Numbers stay json.Number so
// integers and floats can be told apart. The error is a *ValidationError or
// errBodyTooLarge.
func readJSONObject(r *http.Request) (map[string]any, error) {
	obj, _, err := readJSONObjectRaw(r)
	return obj, err
}

// readJSONObjectRaw is readJSONObject that also returns the exact bytes of
// each top-level value, for fields stored as sent (workflow definitions).
func readJSONObjectRaw(r *http.Request) (map[string]any, map[string]json.RawMessage, error) {
	data, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, nil, errBodyTooLarge
		}
		return nil, nil, Problems{{Loc: []any{"body"}, Msg: "There was an error parsing the body", Type: "value_error"}}.Err()
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, Problems{{Loc: []any{"body"}, Msg: "Field required", Type: "missing"}}.Err()
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	err = dec.Decode(&v)
	// offset is where the problem is, as Python's json module (and so
	// FastAPI) reports it: the index of the offending byte.
	var offset int64
	if err == nil {
		end := dec.InputOffset()
		rest := bytes.TrimLeft(data[end:], " \t\r\n")
		if len(rest) > 0 {
			err = errors.New("extra data after the JSON value")
			offset = int64(len(data) - len(rest))
		}
	}
	if err == nil && !utf8.Valid(data) {
		err = errors.New("invalid UTF-8")
		offset = int64(invalidUTF8Offset(data))
	}
	if err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			// Offset counts the offending byte; Python points at it.
			offset = max(se.Offset-1, 0)
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			offset = int64(len(data))
		}
		return nil, nil, Problems{{Loc: []any{"body", offset}, Msg: "JSON decode error", Type: "json_invalid",
			Input: map[string]any{}, Ctx: map[string]any{"error": jsonErrorText(err)}}}.Err()
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, nil, Problems{{Loc: []any{"body"}, Msg: "Input should be a valid dictionary or object to extract fields from",
			Type: "model_type", Input: v}}.Err()
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, nil, fmt.Errorf("re-read body: %w", err)
	}
	return obj, raw, nil
}

// invalidUTF8Offset returns the index of the first byte of data that is not
// part of valid UTF-8.
func invalidUTF8Offset(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(data)
}

func jsonErrorText(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "unexpected end of JSON input"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// fields reads typed fields out of one decoded JSON object, recording a
// pydantic-style problem for each bad one. loc is the object's location.
type fields struct {
	obj map[string]any
	loc []any
	p   *Problems
	// echo, when set, is shown as the input of problems about the whole
	// object (missing fields) instead of obj, e.g. with secrets masked.
	echo any
}

// get returns the raw value of name and whether the key is present.
func (f fields) get(name string) (any, bool) {
	v, ok := f.obj[name]
	return v, ok
}

// missing records a `missing` problem for name.
func (f fields) missing(name string) {
	var input any = f.obj
	if f.echo != nil {
		input = f.echo
	}
	f.p.Add(at(f.loc, name), "missing", "Field required", input, nil)
}

// String reads a string field. present is false when the key is absent or
// null and nullable; ok is false when a problem was recorded. minLen/maxLen
// count characters; 0 means no bound.
func (f fields) String(name string, required, nullable bool, minLen, maxLen int) (val string, present, ok bool) {
	v, has := f.get(name)
	if !has {
		if required {
			f.missing(name)
			return "", false, false
		}
		return "", false, true
	}
	if v == nil && nullable {
		return "", false, true
	}
	return checkString(f.p, at(f.loc, name), v, minLen, maxLen)
}

func checkString(p *Problems, loc []any, v any, minLen, maxLen int) (string, bool, bool) {
	s, isStr := v.(string)
	if !isStr {
		p.Add(loc, "string_type", "Input should be a valid string", v, nil)
		return "", true, false
	}
	n := utf8.RuneCountInString(s)
	if minLen > 0 && n < minLen {
		p.Add(loc, "string_too_short", fmt.Sprintf("String should have at least %d %s", minLen, plural(minLen, "character")), s, map[string]any{"min_length": minLen})
		return s, true, false
	}
	if maxLen > 0 && n > maxLen {
		p.Add(loc, "string_too_long", fmt.Sprintf("String should have at most %d %s", maxLen, plural(maxLen, "character")), s, map[string]any{"max_length": maxLen})
		return s, true, false
	}
	return s, true, true
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// Bool reads a boolean field with pydantic's lax rules: true/false, 0/1, and
// the strings true/false/yes/no/on/off/t/f/y/n/1/0 in any case.
func (f fields) Bool(name string, required bool) (val, present, ok bool) {
	v, has := f.get(name)
	if !has {
		if required {
			f.missing(name)
			return false, false, false
		}
		return false, false, true
	}
	b, ok := checkBool(f.p, at(f.loc, name), v)
	return b, true, ok
}

func checkBool(p *Problems, loc []any, v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case json.Number:
		switch x.String() {
		case "0", "0.0":
			return false, true
		case "1", "1.0":
			return true, true
		}
		p.Add(loc, "bool_parsing", "Input should be a valid boolean, unable to interpret input", v, nil)
		return false, false
	case string:
		switch strings.ToLower(x) {
		case "true", "yes", "on", "t", "y", "1":
			return true, true
		case "false", "no", "off", "f", "n", "0":
			return false, true
		}
		p.Add(loc, "bool_parsing", "Input should be a valid boolean, unable to interpret input", v, nil)
		return false, false
	}
	p.Add(loc, "bool_type", "Input should be a valid boolean", v, nil)
	return false, false
}

// Int reads an integer field (lax: whole floats and numeric strings are
// accepted) and checks ge <= value <= le when the bounds are not nil.
func (f fields) Int(name string, required bool, ge, le *int64) (val int64, present, ok bool) {
	v, has := f.get(name)
	if !has {
		if required {
			f.missing(name)
			return 0, false, false
		}
		return 0, false, true
	}
	n, ok := checkInt(f.p, at(f.loc, name), v)
	if !ok {
		return 0, true, false
	}
	return n, true, checkRange(f.p, at(f.loc, name), v, n, ge, le)
}

func checkInt(p *Problems, loc []any, v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		if n, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
			return n, true
		}
		fl, err := strconv.ParseFloat(x.String(), 64)
		if err == nil && fl == math.Trunc(fl) && math.Abs(fl) < 1<<63 {
			return int64(fl), true
		}
		if err == nil && fl != math.Trunc(fl) {
			p.Add(loc, "int_from_float", "Input should be a valid integer, got a number with a fractional part", v, nil)
			return 0, false
		}
		p.Add(loc, "int_parsing_size", "Unable to parse input string as an integer, exceeded maximum size", v, nil)
		return 0, false
	case string:
		if n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
			return n, true
		}
		p.Add(loc, "int_parsing", "Input should be a valid integer, unable to parse string as an integer", v, nil)
		return 0, false
	}
	p.Add(loc, "int_type", "Input should be a valid integer", v, nil)
	return 0, false
}

// Float reads a number field (lax: numeric strings are accepted) and checks
// ge <= value <= le when the bounds are not nil.
func (f fields) Float(name string, required bool, ge, le *float64) (val float64, present, ok bool) {
	v, has := f.get(name)
	if !has {
		if required {
			f.missing(name)
			return 0, false, false
		}
		return 0, false, true
	}
	var fl float64
	switch x := v.(type) {
	case json.Number:
		var err error
		fl, err = strconv.ParseFloat(x.String(), 64)
		if err != nil {
			f.p.Add(at(f.loc, name), "float_parsing", "Input should be a valid number, unable to parse string as a number", v, nil)
			return 0, true, false
		}
	case string:
		var err error
		fl, err = strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil || math.IsNaN(fl) || math.IsInf(fl, 0) {
			f.p.Add(at(f.loc, name), "float_parsing", "Input should be a valid number, unable to parse string as a number", v, nil)
			return 0, true, false
		}
	default:
		f.p.Add(at(f.loc, name), "float_type", "Input should be a valid number", v, nil)
		return 0, true, false
	}
	loc := at(f.loc, name)
	if ge != nil && fl < *ge {
		f.p.Add(loc, "greater_than_equal", "Input should be greater than or equal to "+fmtNum(*ge), v, map[string]any{"ge": *ge})
		return fl, true, false
	}
	if le != nil && fl > *le {
		f.p.Add(loc, "less_than_equal", "Input should be less than or equal to "+fmtNum(*le), v, map[string]any{"le": *le})
		return fl, true, false
	}
	return fl, true, true
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func checkRange(p *Problems, loc []any, input any, n int64, ge, le *int64) bool {
	if ge != nil && n < *ge {
		p.Add(loc, "greater_than_equal", fmt.Sprintf("Input should be greater than or equal to %d", *ge), input, map[string]any{"ge": *ge})
		return false
	}
	if le != nil && n > *le {
		p.Add(loc, "less_than_equal", fmt.Sprintf("Input should be less than or equal to %d", *le), input, map[string]any{"le": *le})
		return false
	}
	return true
}

// Object reads a nested object field. present is false when absent (or null
// and nullable); ok is false when a problem was recorded.
func (f fields) Object(name string, required, nullable bool) (sub fields, present, ok bool) {
	v, has := f.get(name)
	if !has {
		if required {
			f.missing(name)
			return fields{}, false, false
		}
		return fields{}, false, true
	}
	if v == nil && nullable {
		return fields{}, false, true
	}
	m, isObj := v.(map[string]any)
	if !isObj {
		f.p.Add(at(f.loc, name), "model_type", "Input should be a valid dictionary or object to extract fields from", v, nil)
		return fields{}, true, false
	}
	return fields{obj: m, loc: at(f.loc, name), p: f.p}, true, true
}

func ptr[T any](v T) *T { return &v }

// joinProblems merges the problems of several validation errors (nil ones are
// skipped) into one; any other error is returned as it is.
func joinProblems(errs ...error) error {
	var all Problems
	for _, err := range errs {
		if err == nil {
			continue
		}
		var ve *ValidationError
		if !errors.As(err, &ve) {
			return err
		}
		all = append(all, ve.Problems...)
	}
	return all.Err()
}
