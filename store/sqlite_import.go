package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/outdial/outdial/queries"
)

// insertContacts inserts rows, contacts of campaign id, in one IMMEDIATE
// transaction with multi-row INSERTs (engine.insertContacts): the one
// statement sqlc cannot express (queries/bulk.go).
func (e *sqliteEngine) insertContacts(ctx context.Context, id int64, rows []importRow) error {
	// Prepared on the pool before the transaction takes its only
	// connection; once, then cached.
	full, err := e.wc.stmt(ctx, multiRowSQL(queries.InsertContactsPrefix, queries.ContactValues, importRowsPerStatement))
	if err != nil {
		return fmt.Errorf("prepare contacts insert: %w", err)
	}
	tx, err := e.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after commit
	bind := func(args []any, r *importRow) []any {
		return append(args, id, r.row, r.phone, r.tz, r.context)
	}
	if err := insertRows(ctx, tx, full, queries.InsertContactsPrefix, queries.ContactValues, rows, bind); err != nil {
		return fmt.Errorf("insert contacts: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// multiRowSQL is a multi-row INSERT of n rows: prefix, then values n times.
func multiRowSQL(prefix, values string, n int) string {
	var b strings.Builder
	b.WriteString(prefix)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(values)
	}
	return b.String()
}

// insertRows inserts rows with full, the prepared importRowsPerStatement-row
// statement, in groups; a last, shorter group gets a statement of its own,
// prepared on the transaction's connection (the pool's only one). bind
// appends row i's parameters.
func insertRows(ctx context.Context, tx *sql.Tx, full *sql.Stmt, prefix, values string, rows []importRow, bind func(args []any, r *importRow) []any) error {
	stmt := tx.StmtContext(ctx, full)
	var args []any
	for done := 0; done < len(rows); {
		n := min(len(rows)-done, importRowsPerStatement)
		if n < importRowsPerStatement {
			var err error
			if stmt, err = tx.PrepareContext(ctx, multiRowSQL(prefix, values, n)); err != nil {
				return err
			}
		}
		args = args[:0]
		for i := done; i < done+n; i++ {
			args = bind(args, &rows[i])
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return err
		}
		done += n
	}
	return nil
}
