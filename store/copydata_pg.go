package store

// CopyData's destination: the PostgreSQL transaction that creates the
// schema and streams every table into it (copydata.go).

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/outdial/outdial/queries"
)

// copier is one CopyData's transaction on the destination.
type copier struct {
	ctx      context.Context
	tx       pgx.Tx
	src      *source
	opts     CopyOptions
	report   *CopyReport
	resealed map[sealedCell][]byte // sealed values to write instead (re-sealed with the cluster's key)
	keys     map[string][]string   // per table, what makes its keys and indexes (deferKeys)
}

// pgColumn is a destination column.
type pgColumn struct {
	name, dataType string
	identity       bool
}

// currentSchemaOID selects the namespace unqualified names are created in.
const currentSchemaOID = "(SELECT oid FROM pg_namespace WHERE nspname = current_schema())"

// run is the destination's transaction: refuse a non-empty database,
// create the schema, compare it with the source's, defer its keys and
// indexes, copy every table in foreign-key order (then make its keys and
// indexes and set its identities), analyze.
func (c *copier) run(tx pgx.Tx) error {
	c.tx = tx
	ctx := c.ctx
	// No server-side limit on this transaction's statements (a COPY of
	// millions of rows); SET LOCAL ends with the transaction.
	if _, err := tx.Exec(ctx, "SET LOCAL statement_timeout = 0"); err != nil {
		return fmt.Errorf("set statement_timeout: %w", err)
	}
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(pgMigrationLock)); err != nil {
		return fmt.Errorf("lock migrations: %w", err)
	}
	srcTables, err := c.src.tables(ctx)
	if err != nil {
		return err
	}
	found, err := c.names("SELECT relname::text FROM pg_class WHERE relnamespace = "+currentSchemaOID+
		" AND relname = ANY($1) ORDER BY relname", append(slices.Clone(srcTables), "outdial_schema"))
	if err != nil {
		return fmt.Errorf("check the database is empty: %w", err)
	}
	if len(found) > 0 {
		return &NotEmptyError{Tables: found}
	}
	tablesQuery := "SELECT relname::text FROM pg_class WHERE relnamespace = " + currentSchemaOID +
		" AND relkind IN ('r', 'p') ORDER BY oid"
	before, err := c.names(tablesQuery)
	if err != nil {
		return fmt.Errorf("list tables: %w", err)
	}
	if err := c.createSchema(); err != nil {
		return err
	}
	after, err := c.names(tablesQuery)
	if err != nil {
		return fmt.Errorf("list tables: %w", err)
	}
	var ours []string // in creation order
	for _, t := range after {
		if !slices.Contains(before, t) && t != "outdial_schema" {
			ours = append(ours, t)
		}
	}
	if err := sameNames("tables", "", srcTables, ours); err != nil {
		return err
	}
	order, err := c.fkOrder(ours)
	if err != nil {
		return err
	}
	if c.keys, err = c.deferKeys(ours); err != nil {
		return err
	}
	seqs, err := c.src.sequences(ctx)
	if err != nil {
		return err
	}
	for _, t := range order {
		if err := c.copyTable(t, seqs[t]); err != nil {
			return err
		}
	}
	for _, t := range order {
		if _, err := tx.Exec(ctx, "ANALYZE "+pgx.Identifier{t}.Sanitize()); err != nil {
			return fmt.Errorf("analyze %s: %w", t, err)
		}
	}
	return nil
}

// names runs query, which returns one text column.
func (c *copier) names(query string, args ...any) ([]string, error) {
	rows, err := c.tx.Query(c.ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// createSchema applies every PostgreSQL migration in the transaction and
// records them in outdial_schema, as pgPending does.
func (c *copier) createSchema() error {
	ctx := c.ctx
	if _, err := c.tx.Exec(ctx, `CREATE TABLE outdial_schema (
    version    BIGINT PRIMARY KEY,
    name       TEXT   NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("create schema table: %w", err)
	}
	all, err := PostgresMigrations()
	if err != nil {
		return err
	}
	for _, m := range all {
		body, err := fs.ReadFile(queries.PostgresMigrations, "postgres/migrations/"+m.Name)
		if err != nil {
			return fmt.Errorf("read migration %s: %w", m.Name, err)
		}
		if _, err := c.tx.Exec(ctx, string(body)); err != nil {
			return fmt.Errorf("migration %s: %w", m.Name, err)
		}
		if _, err := c.tx.Exec(ctx, "INSERT INTO outdial_schema (version, name) VALUES ($1, $2)", m.Version, m.Name); err != nil {
			return fmt.Errorf("migration %s: %w", m.Name, err)
		}
		c.report.SchemaVersion = m.Version
	}
	return nil
}

// fkOrder orders tables so that every table comes after those its foreign
// keys reference (a table referencing itself needs no order: a COPY checks
// its foreign keys at the end of the statement); among tables ready at the
// same time, the one created first goes first.
func (c *copier) fkOrder(tables []string) ([]string, error) {
	rows, err := c.tx.Query(c.ctx, `SELECT t.relname::text, r.relname::text FROM pg_constraint k
JOIN pg_class t ON t.oid = k.conrelid JOIN pg_class r ON r.oid = k.confrelid
WHERE k.contype = 'f' AND t.relnamespace = `+currentSchemaOID)
	if err != nil {
		return nil, fmt.Errorf("read foreign keys: %w", err)
	}
	refs := map[string][]string{}
	var from, to string
	if _, err := pgx.ForEachRow(rows, []any{&from, &to}, func() error {
		if from != to {
			refs[from] = append(refs[from], to)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read foreign keys: %w", err)
	}
	done := map[string]bool{}
	order := make([]string, 0, len(tables))
	for len(order) < len(tables) {
		next := ""
		for _, t := range tables {
			if !done[t] && !slices.ContainsFunc(refs[t], func(r string) bool { return !done[r] }) {
				next = t
				break
			}
		}
		if next == "" {
			return nil, fmt.Errorf("the tables' foreign keys form a cycle")
		}
		done[next] = true
		order = append(order, next)
	}
	return order, nil
}

// columns lists table's columns in the destination, in order.
func (c *copier) columns(table string) ([]pgColumn, error) {
	rows, err := c.tx.Query(c.ctx, `SELECT column_name::text, data_type::text, is_identity::text = 'YES'
FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, table)
	if err != nil {
		return nil, fmt.Errorf("read columns of %s: %w", table, err)
	}
	var out []pgColumn
	var col pgColumn
	if _, err := pgx.ForEachRow(rows, []any{&col.name, &col.dataType, &col.identity}, func() error {
		out = append(out, col)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read columns of %s: %w", table, err)
	}
	return out, nil
}

// sameNames fails unless the source's and the destination's names (of
// tables, or of table's columns) are the same sets.
func sameNames(what, table string, src, dst []string) error {
	var onlySrc, onlyDst []string
	for _, n := range src {
		if !slices.Contains(dst, n) {
			onlySrc = append(onlySrc, n)
		}
	}
	for _, n := range dst {
		if !slices.Contains(src, n) {
			onlyDst = append(onlyDst, n)
		}
	}
	if len(onlySrc) == 0 && len(onlyDst) == 0 {
		return nil
	}
	if table != "" {
		what += " of " + table
	}
	return fmt.Errorf("the two schemas' %s differ: only in the source [%s], only in PostgreSQL [%s]",
		what, strings.Join(onlySrc, ", "), strings.Join(onlyDst, ", "))
}

// copyTable streams table's rows from the source snapshot into the
// destination with COPY, checks their count, makes the table's keys and
// indexes (deferKeys), and moves its identity columns' sequences past the
// largest id copied and seq (sqlite_sequence).
func (c *copier) copyTable(table string, seq int64) error {
	ctx, start := c.ctx, time.Now()
	cols, err := c.columns(table)
	if err != nil {
		return err
	}
	srcCols, err := c.src.columns(ctx, table)
	if err != nil {
		return err
	}
	names := make([]string, len(cols))
	quoted := make([]string, len(cols))
	convs := make([]func(any) (any, error), len(cols))
	idCol := -1
	sealedCols := map[int]string{} // column index → name, of the table's sealed columns
	for i, col := range cols {
		names[i], quoted[i] = col.name, pgx.Identifier{col.name}.Sanitize()
		if convs[i], err = converter(col.dataType); err != nil {
			return fmt.Errorf("column %s of %s: %w", col.name, table, err)
		}
		if col.name == "id" {
			idCol = i
		}
		if _, ok := sealedColumns[table][col.name]; ok {
			sealedCols[i] = col.name
		}
	}
	if err := sameNames("columns", table, srcCols, names); err != nil {
		return err
	}
	tableID := pgx.Identifier{table}.Sanitize()
	rows, err := c.src.tx.QueryContext(ctx, "SELECT "+strings.Join(quoted, ", ")+" FROM "+tableID)
	if err != nil {
		return fmt.Errorf("read %s: %w", table, err)
	}
	defer rows.Close()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	row := make([]any, len(cols)) // COPY encodes a row before asking for the next: reused
	var n int64
	next := func() ([]any, error) {
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return nil, fmt.Errorf("read %s: %w", table, err)
			}
			return nil, nil
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("read %s: %w", table, err)
		}
		for i, v := range vals {
			var err error
			if row[i], err = convs[i](v); err != nil {
				where := fmt.Sprintf("row %d", n+1)
				if idCol >= 0 {
					where = fmt.Sprintf("id %v", vals[idCol])
				}
				return nil, fmt.Errorf("%s %s, column %s: %w", table, where, names[i], err)
			}
		}
		if idCol >= 0 && len(sealedCols) > 0 {
			if id, ok := vals[idCol].(int64); ok {
				for i, col := range sealedCols {
					if v := c.resealed[sealedCell{table, col, id}]; v != nil {
						row[i] = v
					}
				}
			}
		}
		n++
		if n%CopyProgressRows == 0 && c.opts.Progress != nil {
			c.opts.Progress(TableCopy{Table: table, Rows: n, Elapsed: time.Since(start)})
		}
		return row, nil
	}
	copied, err := c.tx.CopyFrom(ctx, pgx.Identifier{table}, names, pgx.CopyFromFunc(next))
	if err != nil {
		return fmt.Errorf("copy %s: %w", table, err)
	}
	var want int64
	if err := c.src.tx.QueryRowContext(ctx, "SELECT count(*) FROM "+tableID).Scan(&want); err != nil {
		return fmt.Errorf("read %s: %w", table, err)
	}
	if copied != want || n != want {
		return fmt.Errorf("copy %s: %d rows copied, the source holds %d", table, copied, want)
	}
	keysStart := time.Now()
	for _, stmt := range c.keys[table] {
		if _, err := c.tx.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("copy %s: %s: %w", table, stmt, err)
		}
	}
	keys := time.Since(keysStart)
	for _, col := range cols {
		if col.identity {
			if err := c.setIdentity(table, col.name, seq); err != nil {
				return err
			}
		}
	}
	done := TableCopy{Table: table, Rows: copied, Elapsed: time.Since(start), Keys: keys, Done: true}
	c.report.Tables = append(c.report.Tables, done)
	c.report.Rows += copied
	if c.opts.Progress != nil {
		c.opts.Progress(done)
	}
	return nil
}

// setIdentity makes column's next generated value follow both its largest
// value in table and seq, the largest SQLite handed out.
func (c *copier) setIdentity(table, column string, seq int64) error {
	var top int64
	q := "SELECT COALESCE(max(" + pgx.Identifier{column}.Sanitize() + "), 0) FROM " + pgx.Identifier{table}.Sanitize()
	if err := c.tx.QueryRow(c.ctx, q).Scan(&top); err != nil {
		return fmt.Errorf("identity of %s: %w", table, err)
	}
	top = max(top, seq)
	if top == 0 {
		return nil // nothing ever inserted: the sequence starts at 1
	}
	if _, err := c.tx.Exec(c.ctx, "SELECT setval(pg_get_serial_sequence($1, $2), $3)",
		pgx.Identifier{table}.Sanitize(), column, top); err != nil {
		return fmt.Errorf("identity of %s: %w", table, err)
	}
	return nil
}

// converter returns the conversion of a SQLite value (int64, float64,
// string, []byte or nil, from a STRICT table) to what pgx's COPY encodes
// for a column of PostgreSQL type dataType, refusing what that column
// cannot hold.
func converter(dataType string) (func(any) (any, error), error) {
	switch dataType {
	case "bigint":
		return func(v any) (any, error) {
			switch v.(type) {
			case nil, int64:
				return v, nil
			}
			return nil, fmt.Errorf("holds a %T, not an integer", v)
		}, nil
	case "double precision":
		return func(v any) (any, error) {
			switch x := v.(type) {
			case nil, float64:
				return v, nil
			case int64:
				return float64(x), nil
			}
			return nil, fmt.Errorf("holds a %T, not a number", v)
		}, nil
	case "text":
		return func(v any) (any, error) {
			switch x := v.(type) {
			case nil:
				return nil, nil
			case string:
				return x, checkText(x)
			case []byte:
				return string(x), checkText(string(x))
			}
			return nil, fmt.Errorf("holds a %T, not text", v)
		}, nil
	case "bytea":
		return func(v any) (any, error) {
			switch x := v.(type) {
			case nil, []byte:
				return v, nil
			case string:
				return []byte(x), nil
			}
			return nil, fmt.Errorf("holds a %T, not bytes", v)
		}, nil
	}
	return nil, fmt.Errorf("type %s is not one copy-data converts", dataType)
}

// checkText refuses what PostgreSQL's text cannot store, which SQLite's
// can: a NUL character, bytes that are not UTF-8.
func checkText(s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("holds a NUL character, which PostgreSQL's text cannot store")
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("is not valid UTF-8, which PostgreSQL's text requires")
	}
	return nil
}
