// Package queries holds all of Outdial's SQL: the versioned schema migrations
// (migrations/NNNN_name.sql, applied in order by the store at start-up and
// embedded in the binary) and one .sql file of named queries per table, from
// which sqlc generates store/sqlcdb (see sqlc.yaml at the repository root).
package queries

import "embed"

// Migrations holds migrations/*.sql. File names start with a zero-padded
// version number; the store applies every file whose version is above the
// database's PRAGMA user_version, each in its own transaction.
//
//go:embed migrations/*.sql
var Migrations embed.FS

// PostgresMigrations holds postgres/migrations/*.sql, the PostgreSQL
// engine's schema (store/postgres.go), applied the same way; its version
// is kept in the table outdial_schema.
//
//go:embed postgres/migrations/*.sql
var PostgresMigrations embed.FS
