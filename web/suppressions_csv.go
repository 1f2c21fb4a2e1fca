package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/outdial/outdial/dialer/contacts"
	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/objstore"
)

// The import of a suppression list from an uploaded CSV: the same upload
// (presigned, of the organization) and the same reader as a campaign's
// contacts (API.md 3.3: a phone_number column, E.164 numbers since there is
// no default country; the other columns are ignored), streamed into
// store.ImportSuppressions, which commits a chunk of numbers per short
// transaction. So memory does not grow with the file (except the reader's
// duplicate set, 16 bytes a number) and an import never stalls dialing.
//
// A row the reader rejects is listed in the answer's invalid list by row,
// except a number already seen in the file, which counts as already
// present. A problem of the whole file (no phone_number column, no rows,
// an unreadable header) is a 422 before anything is added. A problem that
// stops the reading part-way (a CSV syntax error, a row too large, more
// rows than the limit, a file larger than the upload limit) is a 422 too,
// but the numbers of the rows before it were added: the problem's ctx says
// how many (added, already_present), and importing the corrected file again
// counts them as already present.

// errUploadTooLarge stops reading an upload past the largest allowed size.
var errUploadTooLarge = errors.New("upload larger than allowed")

// importSuppressions adds the numbers of the CSV uploaded at key to org's
// list.
func (s *Server) importSuppressions(ctx context.Context, org int64, ns store.NewSuppressions, key string) (suppressResultJSON, error) {
	loc := []any{"body", "source_id"}
	notFound := Problems{{Loc: loc, Msg: "Value error, nothing was uploaded at this key in this organization", Type: "object_not_found", Input: key}}.Err()
	if !strings.HasPrefix(key, UploadKeyPrefix(org)) || objstore.ValidateKey(key) != nil || s.uploads == nil {
		return suppressResultJSON{}, notFound
	}
	rc, err := s.uploads.Open(ctx, key)
	if errors.Is(err, objstore.ErrNotFound) {
		return suppressResultJSON{}, notFound
	}
	if err != nil {
		return suppressResultJSON{}, fmt.Errorf("open upload: %w", err)
	}
	defer rc.Close()
	// A remote S3 service does not enforce the size a presigned URL was
	// made for: past the largest allowed upload, the reading fails, so a
	// row cut at the limit is never taken for a number.
	capped := &capReader{r: rc, max: s.maxUpload}
	maxRows := s.limits.MaxCampaignRows
	if maxRows <= 0 {
		maxRows = DefaultMaxCampaignRows
	}
	imp := &csvImport{}
	opts := contacts.Options{MaxProblems: 1, OnProblem: imp.problem}
	var res contacts.Result
	var stopped error // errTooManyRows or errUploadTooLarge
	total, err := s.db.ImportSuppressions(ctx, org, ns, func(add func(string) error) error {
		rows := 0
		var err error
		res, err = contacts.Read(ctx, capped, opts, func(c contacts.Contact) error {
			if rows++; rows > maxRows {
				return errTooManyRows
			}
			return add(c.PhoneNumber)
		})
		if errors.Is(err, errTooManyRows) || errors.Is(err, errUploadTooLarge) {
			// What was read before is added (the last chunk too).
			stopped = err
			return nil
		}
		return err
	})
	if total.Added > 0 {
		s.suppressionsAdded(ctx, org)
	}
	if err != nil {
		return suppressResultJSON{}, fmt.Errorf("import suppressions: %w", err)
	}
	imp.end(res.Rows)

	// A 422 after rows were imported says what they added.
	var p Problems
	var counts map[string]any
	note := ""
	if total.Added+total.AlreadyPresent > 0 {
		counts = map[string]any{"added": total.Added, "already_present": total.AlreadyPresent}
		note = fmt.Sprintf(" (the rows before were imported: %d added, %d already present)", total.Added, total.AlreadyPresent)
	}
	switch {
	case errors.Is(stopped, errTooManyRows):
		p.Add(loc, "csv_too_many_rows", fmt.Sprintf("Value error, the file has more than %d numbers, the most one import takes (serve --max-campaign-rows); split it%s", maxRows, note),
			key, withCounts(map[string]any{"max_rows": maxRows}, counts))
	case errors.Is(stopped, errUploadTooLarge):
		p.Add(loc, "csv_invalid", fmt.Sprintf("Value error, the file is larger than the %d bytes allowed%s", s.maxUpload, note), key, counts)
	}
	for _, pr := range imp.fatal {
		p.addCSV(loc, pr, note, counts)
	}
	if err := p.Err(); err != nil {
		return suppressResultJSON{}, err
	}
	out := imp.out
	if out.Invalid == nil {
		out.Invalid = []invalidEntryJSON{}
	}
	out.Added, out.AlreadyPresent = total.Added, total.AlreadyPresent+imp.duplicates
	return out, nil
}

// withCounts returns m with the entries of counts added.
func withCounts(m, counts map[string]any) map[string]any {
	for k, v := range counts {
		m[k] = v
	}
	return m
}

// csvImport sorts the problems contacts.Read reports (OnProblem, in row
// order, a row's phone_duplicate first) into the rows that are invalid, the
// rows that only repeat a number of an earlier row, and the problems of the
// whole file, without keeping more than one row's problems at a time.
type csvImport struct {
	out        suppressResultJSON // the invalid rows
	duplicates int
	// fatal are the problems of the whole file: row 0 (the file) or 1
	// (the header), and one past the last row read (a problem that stopped
	// the reading), found by end.
	fatal []contacts.Problem

	row   int               // the row whose problems are being collected
	dup   bool              // it repeats a number of an earlier row
	first *contacts.Problem // its first problem other than phone_duplicate
}

func (c *csvImport) problem(p contacts.Problem) {
	if p.Row <= 1 {
		c.fatal = append(c.fatal, p)
		return
	}
	if p.Row != c.row {
		c.flush()
		c.row = p.Row
	}
	if p.Type == contacts.TypePhoneDuplicate {
		c.dup = true
	} else if c.first == nil {
		c.first = &p
	}
}

// flush classifies the row collected so far.
func (c *csvImport) flush() {
	switch {
	case c.first != nil:
		row, typ, msg := c.row, c.first.Type, c.first.Msg
		if in, isStr := c.first.Input.(string); isStr && typ == contacts.TypePhoneInvalid {
			_, msg = numberProblem(in, errors.New("invalid"))
		}
		c.out.addInvalid(invalidEntryJSON{Row: &row, Type: typ, Input: c.first.Input, Msg: msg})
	case c.dup:
		c.duplicates++
	}
	c.row, c.dup, c.first = 0, false, nil
}

// end classifies the last row once the reading is over, rows being the
// number of data rows read (rows 2..rows+1): a problem past them is the one
// that stopped the reading.
func (c *csvImport) end(rows int) {
	if c.row > rows+1 && c.first != nil {
		c.fatal = append(c.fatal, *c.first)
		c.row, c.dup, c.first = 0, false, nil
		return
	}
	c.flush()
}

// capReader reads r and fails with errUploadTooLarge once more than max
// bytes came through (an upload of exactly max bytes reads to its end).
type capReader struct {
	r   io.Reader
	max int64
	n   int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.n > c.max {
		return 0, errUploadTooLarge
	}
	if rem := c.max + 1 - c.n; int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.max {
		return n, errUploadTooLarge
	}
	return n, err
}
