package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the PostgreSQL driver, "pgx"
	"github.com/pressly/goose/v3"
)

// postgresDialect keeps times as timestamptz.
var postgresDialect = dialect{
	name:    "postgres",
	goose:   goose.DialectPostgres,
	dollar:  true,
	timeArg: func(t time.Time) any { return t.UTC() },
	scanTime: func(v any) (time.Time, error) {
		t, ok := v.(time.Time)
		if !ok {
			return time.Time{}, fmt.Errorf("a time stored as %T, want a timestamp", v)
		}
		return t.UTC(), nil
	},
}

// openPostgres opens the PostgreSQL store at dsn and migrates it.
func openPostgres(ctx context.Context, dsn string) (Store, error) {
	where := redact(dsn)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("opening the results store %s: %w", where, err)
	}
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("opening the results store %s: %w", where, err)
	}
	if err := migrate(ctx, db, postgresDialect); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return &sqlStore{db: db, d: postgresDialect, location: where}, nil
}

// redact returns a database URL without its password, for messages.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	return u.Redacted()
}
