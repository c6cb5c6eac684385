package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // the pure-Go SQLite driver, "sqlite"
)

// sqliteDialect keeps times as Unix microseconds (UTC).
var sqliteDialect = dialect{
	name:    "sqlite",
	goose:   goose.DialectSQLite3,
	timeArg: func(t time.Time) any { return t.UnixMicro() },
	scanTime: func(v any) (time.Time, error) {
		us, ok := v.(int64)
		if !ok {
			return time.Time{}, fmt.Errorf("a time stored as %T, want an integer", v)
		}
		return time.UnixMicro(us).UTC(), nil
	},
}

// openSQLite opens (creating it and its directory when missing) the SQLite
// store at path, in WAL mode with full syncs: a run Save returned survives
// a crash of this or any other process using the file.
func openSQLite(ctx context.Context, path string) (Store, error) {
	if path == "" {
		return nil, fmt.Errorf("opening the results store: empty SQLite path")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("opening the results store %s: %w", path, err)
	}
	q := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(FULL)", "foreign_keys(1)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate") // a writer waits for the lock at BEGIN, never fails mid-transaction
	dsn := (&url.URL{Scheme: "file", Opaque: (&url.URL{Path: path}).EscapedPath(), RawQuery: q.Encode()}).String()
	// Several wirebenches opening one new file at once (a server and its
	// clients) race: the first to switch it to WAL holds a lock the others
	// get SQLITE_BUSY from (the busy timeout does not cover that), and
	// goose checks its version table before its migration's transaction,
	// so the losers fail with "table already exists" once the winner's
	// transaction (migration and version row together) committed. Both
	// pass on a second try, which then finds the work done.
	var db *sql.DB
	var err error
	for try := 1; ; try++ {
		if db, err = openSQLiteDB(ctx, dsn); err == nil {
			break
		}
		if try == 8 || ctx.Err() != nil {
			return nil, fmt.Errorf("opening the results store %s: %w", path, err)
		}
		time.Sleep(time.Duration(try) * 25 * time.Millisecond)
	}
	return &sqlStore{db: db, d: sqliteDialect, location: path}, nil
}

// openSQLiteDB opens the database at dsn and brings its schema up to date.
func openSQLiteDB(ctx context.Context, dsn string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := migrate(ctx, db, sqliteDialect); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}
