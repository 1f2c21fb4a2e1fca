package store

// CopyData loads each table before its keys and indexes, as pg_restore
// does: building an index from a million rows at once (one sort) and
// checking a foreign key with one join are several times faster than
// maintaining them row by row during the COPY.

import (
	"fmt"

	"github.com/jackc/pgx/v5"
)

// deferKeys drops the foreign keys, the primary-key and unique
// constraints and the other indexes of tables (just created, in this
// transaction) and returns, per table, the statements that make them again
// exactly as the migrations did: its primary key and unique constraints,
// its indexes, then its foreign keys (copyTable runs them once the table is
// loaded; the tables a foreign key references are loaded and keyed
// before). The caller's schema check compares the result with Migrate's.
func (c *copier) deferKeys(tables []string) (map[string][]string, error) {
	ctx := c.ctx
	type drop struct{ table, stmt string }
	var drops []drop // foreign keys first: they depend on the unique indexes
	create := map[string][]string{}
	var fks []drop // re-created last in their table
	rows, err := c.tx.Query(ctx, `SELECT t.relname::text, k.conname::text, k.contype = 'f', pg_get_constraintdef(k.oid)
FROM pg_constraint k JOIN pg_class t ON t.oid = k.conrelid
WHERE t.relnamespace = `+currentSchemaOID+` AND t.relname = ANY($1) AND k.contype IN ('f', 'p', 'u')
ORDER BY k.contype = 'f' DESC, k.oid`, tables)
	if err != nil {
		return nil, fmt.Errorf("read constraints: %w", err)
	}
	var table, name, def string
	var fk bool
	if _, err := pgx.ForEachRow(rows, []any{&table, &name, &fk, &def}, func() error {
		t, n := pgx.Identifier{table}.Sanitize(), pgx.Identifier{name}.Sanitize()
		drops = append(drops, drop{table, "ALTER TABLE " + t + " DROP CONSTRAINT " + n})
		add := "ALTER TABLE " + t + " ADD CONSTRAINT " + n + " " + def
		if fk {
			fks = append(fks, drop{table, add})
		} else {
			create[table] = append(create[table], add)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read constraints: %w", err)
	}
	rows, err = c.tx.Query(ctx, `SELECT t.relname::text, x.relname::text, pg_get_indexdef(i.indexrelid)
FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid JOIN pg_class x ON x.oid = i.indexrelid
WHERE t.relnamespace = `+currentSchemaOID+` AND t.relname = ANY($1)
  AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid AND k.conrelid = i.indrelid)
ORDER BY i.indexrelid`, tables)
	if err != nil {
		return nil, fmt.Errorf("read indexes: %w", err)
	}
	if _, err := pgx.ForEachRow(rows, []any{&table, &name, &def}, func() error {
		drops = append(drops, drop{table, "DROP INDEX " + pgx.Identifier{name}.Sanitize()})
		create[table] = append(create[table], def)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read indexes: %w", err)
	}
	for _, f := range fks {
		create[f.table] = append(create[f.table], f.stmt)
	}
	for _, d := range drops {
		if _, err := c.tx.Exec(ctx, d.stmt); err != nil {
			return nil, fmt.Errorf("defer the keys of %s: %w", d.table, err)
		}
	}
	return create, nil
}
