package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Backup writes a consistent copy of the database at path to the new file
// to, while other connections and processes (a running `outdial serve`)
// keep reading and writing the database (docs/api.md section 8).
//
// The copy is one `VACUUM INTO` on a read-only connection of its own. In
// WAL mode that statement reads inside a single read transaction: it sees
// one snapshot of the database (every transaction committed before it
// began, none after), takes no lock a writer waits for, and writes a
// compact, defragmented database (no free pages) that opens like any other.
// Writers go on while it runs; checkpoints cannot move past its snapshot
// until it ends, so the WAL grows by what is written meanwhile and is
// checkpointed (and truncated to the store's journal_size_limit) after.
// The source is opened with mode=ro and no migration runs: the database
// and its WAL are not changed (a database written by a newer Outdial is
// refused first, *SchemaTooNewError, as Open refuses it; of a database
// nobody has open, SQLite's read-only connection leaves an empty -wal and
// a -shm file beside it, as serve's read pool would). The copy keeps the
// source's schema version (PRAGMA user_version); Open migrates it when it
// is older than the binary that opens it.
//
// to must not exist: an existing file (or directory) is never replaced and
// the error wraps fs.ErrExist. The copy is written to a temporary file
// ".<name>.tmp-*" (mode 0600: it holds sealed credentials and phone
// numbers) in to's directory, synced to disk, then linked to its final
// name, which fails rather than replace a file created meanwhile (file
// systems without hard links get a rename after a last existence check),
// and the directory is synced. On any error (a bad or unwritable
// directory, a full disk, ctx cancelled, which interrupts the copy) the
// temporary file is removed and nothing is left under to: the final name
// only ever holds a complete copy.
//
// A missing source is an error (the database is not created). path must
// not hold '?' or '#', like Open's (cmd checks the data directory).
func Backup(ctx context.Context, path, to string) (err error) {
	if to == "" || strings.HasSuffix(to, string(os.PathSeparator)) || strings.HasSuffix(to, "/") {
		return fmt.Errorf("backup: %q does not name a file", to)
	}
	final, err := filepath.Abs(to)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if _, err := os.Lstat(final); err == nil {
		return existsError(to)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("backup: %w", err)
	}
	if st, err := os.Stat(path); err != nil {
		return fmt.Errorf("backup: no database to copy: %w", err)
	} else if !st.Mode().IsRegular() {
		return fmt.Errorf("backup: database %s is not a regular file", path)
	}
	if err := CheckSchema(ctx, path); err != nil {
		return err
	}

	// The temporary file is created empty (VACUUM INTO accepts an empty
	// file, never one holding data), so it has our mode, 0600, and a name
	// nothing else uses. Its absolute path can never read as a "file:" URI.
	tmpFile, err := os.CreateTemp(filepath.Dir(final), "."+filepath.Base(final)+".tmp-*")
	if err != nil {
		return fmt.Errorf("backup: create temporary file in %s: %w", filepath.Dir(final), err)
	}
	tmp := tmpFile.Name()
	linked := false
	defer func() {
		if err == nil {
			return
		}
		if linked {
			os.Remove(final) //nolint:errcheck // best effort: the error says what failed
		}
		removeTemp(tmp)
	}()
	if err := tmpFile.Close(); err != nil {
		return fmt.Errorf("backup: %w", err)
	}

	if err := vacuumInto(ctx, path, tmp); err != nil {
		return fmt.Errorf("backup: copy database to %s: %w", to, err)
	}
	if err := syncFile(tmp); err != nil {
		return fmt.Errorf("backup: sync copy: %w", err)
	}
	if err := os.Link(tmp, final); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return existsError(to)
		}
		// No hard links here (some network and FAT file systems): a
		// rename, which would replace a file created since the check
		// above, after checking once more.
		if _, serr := os.Lstat(final); serr == nil {
			return existsError(to)
		}
		if err := os.Rename(tmp, final); err != nil {
			return fmt.Errorf("backup: %w", err)
		}
	}
	linked = true
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("backup: remove temporary file: %w", err)
	}
	if err := syncFile(filepath.Dir(final)); err != nil {
		return fmt.Errorf("backup: sync directory: %w", err)
	}
	return nil
}

// vacuumInto copies the database at path into the empty file tmp with
// VACUUM INTO, on a read-only connection opened for it alone.
func vacuumInto(ctx context.Context, path, tmp string) error {
	src, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer src.Close()
	src.SetMaxOpenConns(1)
	if _, err := src.ExecContext(ctx, "VACUUM INTO ?", tmp); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		return err
	}
	if err := src.Close(); err != nil {
		return fmt.Errorf("close database: %w", err)
	}
	return nil
}

// existsError is Backup's refusal to replace an existing file.
func existsError(to string) error {
	return fmt.Errorf("backup: %s: %w (a backup never replaces a file; choose a new name)", to, fs.ErrExist)
}

// syncFile fsyncs the file or directory at name.
func syncFile(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	serr := f.Sync()
	if err := f.Close(); serr == nil {
		serr = err
	}
	return serr
}

// removeTemp removes the temporary copy and any journal SQLite may have
// left beside it.
func removeTemp(tmp string) {
	for _, name := range []string{tmp, tmp + "-journal", tmp + "-wal", tmp + "-shm"} {
		os.Remove(name) //nolint:errcheck // best effort; most do not exist
	}
}
