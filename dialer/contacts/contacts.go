// Package contacts reads and checks a campaign's contacts CSV (API.md 3.3):
// it streams the file, normalises every phone number to E.164, rejects
// duplicates, checks the optional timezone column and the template variables
// the workflow needs, and yields the accepted contacts in row order together
// with the problems the campaign-create endpoint reports as 422 entries
// (API.md 4.2).
//
// # The file
//
//   - UTF-8. A leading UTF-8 byte-order mark is skipped. A UTF-16 byte-order
//     mark makes the whole file csv_invalid (row 0). A row holding bytes that
//     are not UTF-8, or a NUL byte, is csv_invalid for that row and skipped;
//     in the header it is csv_invalid on row 1 and stops the reading.
//   - Comma-separated with RFC 4180 quoting (encoding/csv, strict quotes).
//     Blank lines are skipped and are not rows. A syntax error (a bare or
//     unterminated quote) is csv_invalid for the row where it occurs and stops
//     the reading: the rows after it cannot be delimited reliably. So does a
//     row larger than Options.MaxRowBytes.
//   - The first row is the header (row 1); data rows are numbered from 2 in
//     the order they appear. Header names are trimmed. The phone_number and
//     timezone columns are found case-insensitively; every other name is kept
//     as written (template variables are case-sensitive). Columns whose name
//     is blank are ignored. A repeated column name, or a second phone_number or
//     timezone column, is csv_invalid on row 1 and stops the reading, as does a
//     missing phone_number column (csv_no_phone_column, row 0).
//   - A row with a different number of fields than the header is csv_invalid
//     for that row and skipped: padding or truncating it could shift values
//     into the wrong variables.
//   - No row at all, or only a header, is csv_empty (row 0).
//
// # A row
//
// The phone_number cell is normalised with phone.Normalize and the default
// country (phone_missing when blank, phone_invalid when not a valid number).
// A number already accepted on an earlier row is phone_duplicate; the first
// row keeps it. A number counts as seen once it appeared valid, even if that
// row was rejected for another reason, so every later copy is reported. A
// non-blank timezone cell must be an IANA zone name that time.LoadLocation
// knows ("Local" is refused), else timezone_invalid. A required template
// variable whose cell is blank (empty or only white space) is variable_empty.
// A row with any problem is not yielded; the reading goes on so that all
// problems of the file are reported together.
//
// # Cost
//
// Memory does not grow with the number of rows except for the duplicate set,
// which holds one 8-byte key per accepted number (the digits of the E.164
// number as an integer, exact up to 19 digits; a 64-bit hash above). The
// problems kept are capped by Options.MaxProblems; all are counted. CSV
// decoding runs in one goroutine feeding batches of rows to validation
// workers; results are put back in row order before they are yielded.
package contacts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"

	"github.com/outdial/outdial/dialer/phone"
)

// Problem types. The first eight are those of API.md 4.2; timezone_invalid is
// ours, for a timezone cell that is not an IANA zone name.
const (
	TypeCSVInvalid              = "csv_invalid"
	TypeCSVNoPhoneColumn        = "csv_no_phone_column"
	TypeCSVEmpty                = "csv_empty"
	TypeTemplateVariableMissing = "template_variable_missing"
	TypePhoneInvalid            = "phone_invalid"
	TypePhoneMissing            = "phone_missing"
	TypePhoneDuplicate          = "phone_duplicate"
	TypeVariableEmpty           = "variable_empty"
	TypeTimezoneInvalid         = "timezone_invalid"
)

// PhoneColumn and TimezoneColumn are the special column names, matched
// case-insensitively after trimming.
const (
	PhoneColumn    = "phone_number"
	TimezoneColumn = "timezone"
)

// Defaults for the zero Options fields.
const (
	// DefaultMaxProblems is API.md 4.2's limit of reported problems.
	DefaultMaxProblems = 100
	// DefaultMaxRowBytes bounds one row (all its cells, quotes and line
	// breaks included) so that one enormous cell cannot exhaust memory.
	DefaultMaxRowBytes = 1 << 20
	// defaultBatchSize is the number of rows handed to a worker at once.
	defaultBatchSize = 512
)

// maxInputEcho bounds the cell text copied into Problem.Input.
const maxInputEcho = 256

// ErrInvalidOptions is returned (wrapped) by Read for options that are a
// programming error of the caller, such as an unknown default country.
var ErrInvalidOptions = errors.New("invalid contacts options")

// Options configures Read. The zero value reads a file with no default
// country and no required variables.
type Options struct {
	// DefaultCountry is the ISO 3166 alpha-2 region used for numbers written
	// without a leading "+" (the campaign's default_country); empty means
	// none, and such numbers are phone_invalid. It must satisfy
	// phone.ValidRegion when set.
	DefaultCountry string
	// RequiredVariables are the template variables the workflow uses without
	// a default, by column name (case-sensitive). A missing column is
	// template_variable_missing (row 0); a blank cell is variable_empty.
	RequiredVariables []string
	// MaxProblems caps Result.Problems: 0 means DefaultMaxProblems, a
	// negative value keeps every problem. Result.ProblemCount counts all.
	MaxProblems int
	// OnProblem, when set, is called with every problem as it is found,
	// those beyond MaxProblems included, in the order Result.Problems lists
	// them (a row's phone_duplicate first, then its other problems), from
	// the goroutine that called Read. It lets a caller classify every
	// problem of a large file without keeping them all.
	OnProblem func(Problem)
	// MaxRowBytes caps the size of one row; 0 means DefaultMaxRowBytes.
	MaxRowBytes int
	// Workers is the number of validation goroutines; 0 means
	// runtime.GOMAXPROCS(0).
	Workers int

	batchSize int // rows per batch; 0 means defaultBatchSize (tests shrink it)
}

// Contact is one accepted row.
type Contact struct {
	// Row is the row number in the file: the header is 1, the first data
	// row 2.
	Row int
	// PhoneNumber is the number in E.164 form, e.g. "+14155550100".
	PhoneNumber string
	// Timezone is the trimmed timezone cell, an IANA zone name, or "" when
	// the file has no timezone column or the cell is blank (the campaign's
	// timezone applies).
	Timezone string
	// InitialContext maps every named column except phone_number (the
	// timezone column included) to the row's cell, exactly as written. It is
	// never nil.
	InitialContext map[string]string
}

// Problem is one thing wrong with the file or a row. The campaign layer turns
// it into a 422 entry with loc ["body","source_id","row",Row] (or
// ["body","source_id"] when Row is 0).
type Problem struct {
	// Row is the row number (header = 1), or 0 for a problem of the whole
	// file.
	Row int
	// Type is one of the Type* constants.
	Type string
	// Msg is a human-readable sentence.
	Msg string
	// Column is the header name of the cell concerned, if any.
	Column string
	// Input is the offending value: the cell text (at most 256 bytes), a
	// field count, the header names or the variable name; nil if none.
	Input any
}

// Result summarises a Read.
type Result struct {
	// Columns are the trimmed header names in file order (blank for ignored
	// columns); nil when the header could not be read.
	Columns []string
	// Rows is the number of data rows read, accepted or not.
	Rows int
	// Accepted is the number of accepted contacts that yield took without
	// error (with a nil yield: the number of acceptable rows).
	Accepted int
	// Problems holds the first problems in row order, file-level ones
	// first, at most Options.MaxProblems of them.
	Problems []Problem
	// ProblemCount is the number of problems found, including those beyond
	// the cap. A file is acceptable when it is 0.
	ProblemCount int
}

// Omitted returns how many problems were counted but not kept in Problems
// (API.md 4.2's "one entry saying how many more").
func (r *Result) Omitted() int { return r.ProblemCount - len(r.Problems) }

// Read reads a contacts CSV from r and calls yield, from the calling
// goroutine and in row order, for every accepted contact. yield may be nil to
// only check the file. Read goes on after row problems so that Result lists
// every problem; it stops early only after a problem that makes the rest of
// the file unreadable (see the package comment).
//
// Problems in the file are not errors: they are in Result and err is nil.
// err is non-nil when opts are invalid (ErrInvalidOptions), when reading r
// fails, when yield returns an error (returned wrapped, after which yield is
// not called again) or when ctx ends. Read returns only after its goroutines
// have stopped, which includes waiting for an in-progress r.Read to return;
// give it a reader that honours ctx.
func Read(ctx context.Context, r io.Reader, opts Options, yield func(Contact) error) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("read contacts: %w", err)
	}
	opts.DefaultCountry = strings.ToUpper(strings.TrimSpace(opts.DefaultCountry))
	if opts.DefaultCountry != "" && !phone.ValidRegion(opts.DefaultCountry) {
		return Result{}, fmt.Errorf("default country %q: %w", opts.DefaultCountry, ErrInvalidOptions)
	}
	if opts.MaxProblems == 0 {
		opts.MaxProblems = DefaultMaxProblems
	}
	if opts.MaxRowBytes <= 0 {
		opts.MaxRowBytes = DefaultMaxRowBytes
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.batchSize <= 0 {
		opts.batchSize = defaultBatchSize
	}
	opts.RequiredVariables = slices.Clone(opts.RequiredVariables)
	rd := &reader{opts: opts, yield: yield}
	err := rd.run(ctx, r)
	return rd.res, err
}

// addProblem records p, keeping it only while under the cap.
func (res *Result) addProblem(max int, p Problem) {
	res.ProblemCount++
	if max < 0 || len(res.Problems) < max {
		res.Problems = append(res.Problems, p)
	}
}
