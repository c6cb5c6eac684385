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
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("opening the results store %s: %w", path, err)
	}
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("opening the results store %s: %w", path, err)
	}
	// Several wirebenches opening one new file at once (a server and its
	// clients) race to create the schema: goose checks the version table
	// before its migration's transaction, so the losers fail with "table
	// already exists" after the winner's transaction (migration and version
	// row together) committed, and find the schema done when they try again.
	err = migrate(ctx, db, sqliteDialect)
	for try := 1; err != nil && try < 5 && ctx.Err() == nil; try++ {
		time.Sleep(time.Duration(try) * 20 * time.Millisecond)
		err = migrate(ctx, db, sqliteDialect)
	}
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &sqlStore{db: db, d: sqliteDialect, location: path}, nil
}
