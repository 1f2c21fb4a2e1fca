package cmd

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// createPrivate creates the database file empty with mode 0600 when it does
// not exist yet. SQLite opens an empty file as a new database and gives its
// -wal and -shm files the database file's mode, so the whole database stays
// readable by its owner only (it holds sealed credentials, contacts and
// phone numbers). An existing file is left as it is.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create database: %w", err)
	}
	return f.Close()
}

// checkDataDir refuses a data directory whose path SQLite would read as part
// of a URI: store.Open hands the database path to SQLite as "file:PATH?…",
// so a '?' or '#' silently cuts the path (the database would land in another
// file) and a '%' is decoded as an escape.
func checkDataDir(dir string) error {
	if i := strings.IndexAny(dir, "?#%"); i >= 0 {
		return fmt.Errorf("data directory %q: the character %q is not supported in its path", dir, dir[i])
	}
	return nil
}
