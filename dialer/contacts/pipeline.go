package contacts

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"slices"
	"sync"
)

// The pipeline: one decoder goroutine reads CSV records into batches of rows;
// Options.Workers goroutines check the rows of a batch (phone numbers,
// timezones, variables) and build the contacts; the goroutine that called Read
// merges the batches back into row order, runs the duplicate check (which
// must see rows in order to keep the first) and calls yield. A fixed set of
// batches circulates decoder → workers → merger → decoder, which bounds the
// memory in flight and makes a slow yield slow down the decoder.

// batch is a run of consecutive rows and, once checked, their verdicts.
type batch struct {
	seq      int      // position in the file, from 0
	firstRow int      // row number of the first row
	fields   []string // the rows' cells, row i is fields[offsets[i]:offsets[i+1]]
	offsets  []int

	last bool     // no batch follows
	stop *Problem // fatal problem found right after the rows
	err  error    // read error right after the rows

	results  []rowResult // filled by a worker, one per row
	problems []Problem
	contacts []Contact
}

// rows returns the number of rows in b.
func (b *batch) rows() int { return max(len(b.offsets)-1, 0) }

// reset empties b for reuse, dropping references to cells and contacts.
func (b *batch) reset() {
	clear(b.fields)
	clear(b.results)
	clear(b.problems)
	clear(b.contacts)
	*b = batch{
		fields:   b.fields[:0],
		offsets:  b.offsets[:0],
		results:  b.results[:0],
		problems: b.problems[:0],
		contacts: b.contacts[:0],
	}
}

// reader is the state of one Read.
type reader struct {
	opts  Options
	yield func(Contact) error
	res   Result
	seen  *keySet // duplicate set
	phone string  // phone column name, for duplicate problems
}

// addProblem records p under the cap and hands it to Options.OnProblem.
func (rd *reader) addProblem(p Problem) {
	if rd.opts.OnProblem != nil {
		rd.opts.OnProblem(p)
	}
	rd.res.addProblem(rd.opts.MaxProblems, p)
}

// run reads the header, then pipes the rows.
func (rd *reader) run(ctx context.Context, r io.Reader) error {
	in, err := openInput(r, rd.opts.MaxRowBytes)
	if errors.Is(err, errUTF16) {
		rd.addProblem(Problem{Type: TypeCSVInvalid, Msg: "the file is UTF-16 text; save it as UTF-8 (CSV UTF-8)"})
		return nil
	}
	if err != nil {
		return err
	}
	cr := csv.NewReader(in)
	cr.FieldsPerRecord = -1 // field counts are checked per row, with our message
	cr.ReuseRecord = true
	rec, err := cr.Read()
	if errors.Is(err, io.EOF) {
		rd.addProblem(Problem{Type: TypeCSVEmpty, Msg: "the file is empty"})
		return nil
	}
	if err != nil {
		if p := rd.stopProblem(err, 1); p != nil {
			rd.addProblem(*p)
			return nil
		}
		return fmt.Errorf("read contacts: %w", err)
	}
	h, probs, fatal := parseHeader(rec, rd.opts.RequiredVariables)
	rd.res.Columns = slices.Clone(h.names)
	for _, p := range probs {
		rd.addProblem(p)
	}
	if fatal {
		return nil
	}
	rd.phone = h.names[h.phone]
	rd.seen = newKeySet()
	chk := &checker{h: h, country: rd.opts.DefaultCountry, build: rd.yield != nil, seed: maphash.MakeSeed()}
	return rd.pipe(ctx, cr, chk)
}

// stopProblem turns an error of the CSV reader at row into the csv_invalid
// problem that ends the reading, or returns nil for an I/O error.
func (rd *reader) stopProblem(err error, row int) *Problem {
	if errors.Is(err, errRowTooLarge) {
		return &Problem{
			Row: row, Type: TypeCSVInvalid, Input: rd.opts.MaxRowBytes,
			Msg: fmt.Sprintf("the row is larger than %d bytes; reading stopped here", rd.opts.MaxRowBytes),
		}
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		where := fmt.Sprintf("line %d, column %d", pe.Line, pe.Column)
		if pe.StartLine != pe.Line {
			where += fmt.Sprintf(" (the row starts on line %d)", pe.StartLine)
		}
		return &Problem{
			Row: row, Type: TypeCSVInvalid,
			Msg: fmt.Sprintf("CSV syntax error on %s: %s; reading stopped here", where, pe.Err.Error()),
		}
	}
	return nil
}

// pipe runs the decoder and the workers and merges their batches.
func (rd *reader) pipe(ctx context.Context, cr *csv.Reader, chk *checker) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := 2*rd.opts.Workers + 2
	free := make(chan *batch, n)
	for range n {
		free <- &batch{}
	}
	work := make(chan *batch, n)
	done := make(chan *batch, n)

	var wg, workers sync.WaitGroup
	wg.Go(func() { rd.decode(ctx, cr, free, work) })
	for range rd.opts.Workers {
		workers.Go(func() {
			for b := range work {
				for i := range b.rows() {
					chk.check(b, b.firstRow+i, b.fields[b.offsets[i]:b.offsets[i+1]])
				}
				done <- b
			}
		})
	}
	wg.Go(func() {
		workers.Wait()
		close(done)
	})
	err := rd.merge(ctx, cancel, done, free)
	wg.Wait()
	return err
}

// decode reads records into batches until the input ends, a fatal problem or
// an error occurs, or ctx ends. It closes work when it returns.
func (rd *reader) decode(ctx context.Context, cr *csv.Reader, free <-chan *batch, work chan<- *batch) {
	defer close(work)
	row := 1 // the header
	for seq := 0; ; seq++ {
		var b *batch
		select {
		case <-ctx.Done():
			return
		case b = <-free:
		}
		b.seq, b.firstRow = seq, row+1
		b.offsets = append(b.offsets, 0)
		for b.rows() < rd.opts.batchSize {
			rec, err := cr.Read()
			if errors.Is(err, io.EOF) {
				b.last = true
				break
			}
			if err != nil {
				b.last = true
				if b.stop = rd.stopProblem(err, row+1); b.stop == nil {
					b.err = fmt.Errorf("read contacts: %w", err)
				}
				break
			}
			row++
			b.fields = append(b.fields, rec...)
			b.offsets = append(b.offsets, len(b.fields))
		}
		last := b.last // b belongs to the workers once sent
		work <- b      // never blocks: work holds every batch
		if last {
			return
		}
	}
}

// merge takes checked batches from done, puts them back in file order and
// applies them. It returns once done is closed; on the first error it cancels
// ctx and only recycles the remaining batches.
func (rd *reader) merge(ctx context.Context, cancel context.CancelFunc, done <-chan *batch, free chan<- *batch) error {
	pending := make(map[int]*batch)
	next, ended := 0, false
	var err error
	for b := range done {
		pending[b.seq] = b
		for {
			b, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			if err == nil {
				if err = ctx.Err(); err != nil {
					err = fmt.Errorf("read contacts: %w", err)
				} else {
					err = rd.apply(b)
					ended = b.last
				}
				if err != nil {
					cancel()
				}
			}
			b.reset()
			free <- b // never blocks: free holds every batch
		}
	}
	if err == nil && !ended {
		err = fmt.Errorf("read contacts: %w", context.Cause(ctx))
	}
	return err
}

// apply runs the duplicate check on a batch in row order, records its
// problems and yields its contacts.
func (rd *reader) apply(b *batch) error {
	for _, r := range b.results {
		rd.res.Rows++
		rejected := r.probEnd > r.probStart
		if r.hasKey && !rd.seen.add(r.key) {
			rejected = true
			rd.addProblem(Problem{
				Row: r.row, Type: TypePhoneDuplicate, Column: rd.phone, Input: clip(r.phoneRaw),
				Msg: fmt.Sprintf("phone number %s already appears in an earlier row", r.phone),
			})
		}
		for _, p := range b.problems[r.probStart:r.probEnd] {
			rd.addProblem(p)
		}
		if rejected || r.contact < 0 {
			continue
		}
		if rd.yield != nil {
			if err := rd.yield(b.contacts[r.contact]); err != nil {
				return fmt.Errorf("contacts row %d: %w", r.row, err)
			}
		}
		rd.res.Accepted++
	}
	if b.stop != nil {
		rd.addProblem(*b.stop)
	}
	if b.err != nil {
		return b.err
	}
	if b.last && b.stop == nil && rd.res.Rows == 0 {
		rd.addProblem(Problem{Type: TypeCSVEmpty, Msg: "the file has a header but no contact rows"})
	}
	return nil
}
