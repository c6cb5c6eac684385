package store

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations
var migrations embed.FS

// migrationTable is goose's version table, named for wirebench so a shared
// PostgreSQL database can hold other tools' tables too.
const migrationTable = "wirebench_schema_version"

// wirebenchLockID is the PostgreSQL advisory lock taken while migrating
// ("wbstore" in ASCII).
const wirebenchLockID = 0x7762_7374_6f72_65

// dialect is what differs between the SQL databases.
type dialect struct {
	name     string        // "sqlite" or "postgres", the migrations directory
	goose    goose.Dialect // for the migrations
	dollar   bool          // placeholders are $1, $2, … (else ?)
	timeArg  func(time.Time) any
	scanTime func(any) (time.Time, error)
}

// sqlStore is Store on a database/sql database.
type sqlStore struct {
	db       *sql.DB
	d        dialect
	location string
}

// migrate brings the schema up to date with the embedded migrations.
func migrate(ctx context.Context, db *sql.DB, d dialect) error {
	sub, err := fs.Sub(migrations, "migrations/"+d.name)
	if err != nil {
		return err
	}
	opts := []goose.ProviderOption{goose.WithTableName(migrationTable), goose.WithDisableGlobalRegistry(true)}
	if d.name == "postgres" {
		// Two wirebenches starting at once against a new lab database:
		// one migrates, the other waits.
		// wirebench's own lock id (other tools using goose in a shared
		// database keep theirs), retried every second for up to 15 s.
		locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(wirebenchLockID), lock.WithLockTimeout(1, 15))
		if err != nil {
			return err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(d.goose, db, sub, opts...)
	if err != nil {
		return fmt.Errorf("preparing the results store's migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrating the results store: %w", err)
	}
	return nil
}

// q rewrites ? placeholders into the dialect's.
func (s *sqlStore) q(query string) string {
	if !s.d.dollar {
		return query
	}
	var b strings.Builder
	n := 0
	for _, c := range query {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

func (s *sqlStore) Location() string { return s.location }

func (s *sqlStore) Close() error { return s.db.Close() }

// jsonOr returns doc as text, or def when doc is empty.
func jsonOr(doc json.RawMessage, def string) (string, error) {
	if len(doc) == 0 {
		return def, nil
	}
	if !json.Valid(doc) {
		return "", errors.New("not valid JSON")
	}
	return string(doc), nil
}

func (s *sqlStore) Save(ctx context.Context, run *Run) (int64, error) {
	if run.Kind == "" {
		return 0, errors.New("saving a run: no kind")
	}
	cfg, err := jsonOr(run.Config, "{}")
	if err != nil {
		return 0, fmt.Errorf("saving a run: its config is %w", err)
	}
	host, err := jsonOr(run.Host, "{}")
	if err != nil {
		return 0, fmt.Errorf("saving a run: its host facts are %w", err)
	}
	res, err := jsonOr(run.Result, "null")
	if err != nil {
		return 0, fmt.Errorf("saving a run: its result is %w", err)
	}
	for k := range run.Labels {
		if k == "" || strings.ContainsAny(k, "=,") {
			return 0, fmt.Errorf("saving a run: invalid label key %q", k)
		}
	}
	started, saved := run.StartedAt, time.Now()
	if started.IsZero() {
		started = saved
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("saving a run to %s: %w", s.location, err)
	}
	defer func() { _ = tx.Rollback() }() // after Commit: a no-op
	var id int64
	err = tx.QueryRowContext(ctx, s.q(`INSERT INTO runs (kind, started_at, saved_at, version, target, summary, config, host, result)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
		run.Kind, s.d.timeArg(started), s.d.timeArg(saved), run.Version, run.Target, run.Summary, cfg, host, res).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("saving a run to %s: %w", s.location, err)
	}
	for k, v := range run.Labels {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO run_labels (run_id, key, value) VALUES (?, ?, ?)`), id, k, v); err != nil {
			return 0, fmt.Errorf("saving a run's labels to %s: %w", s.location, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("saving a run to %s: %w", s.location, err)
	}
	return id, nil
}

// where is the WHERE clause and its arguments for f.
func (s *sqlStore) where(f Filter) (string, []any) {
	var conds []string
	var args []any
	if f.Kind != "" {
		conds = append(conds, "kind = ?")
		args = append(args, f.Kind)
	}
	if !f.Since.IsZero() {
		conds = append(conds, "started_at >= ?")
		args = append(args, s.d.timeArg(f.Since))
	}
	for k, v := range f.Labels {
		conds = append(conds, "EXISTS (SELECT 1 FROM run_labels l WHERE l.run_id = runs.id AND l.key = ? AND l.value = ?)")
		args = append(args, k, v)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

const listColumns = "id, kind, started_at, saved_at, version, target, summary"

func (s *sqlStore) List(ctx context.Context, f Filter) ([]Run, error) {
	where, args := s.where(f)
	query := "SELECT " + listColumns + " FROM runs" + where + " ORDER BY started_at DESC, id DESC"
	if f.Limit > 0 {
		query += " LIMIT " + strconv.Itoa(f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, fmt.Errorf("listing runs in %s: %w", s.location, err)
	}
	defer rows.Close()
	var runs []Run
	for rows.Next() {
		var r Run
		if err := s.scan(rows, &r, false); err != nil {
			return nil, fmt.Errorf("listing runs in %s: %w", s.location, err)
		}
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing runs in %s: %w", s.location, err)
	}
	// Newest were selected (for Limit); hand them out oldest first.
	for i, j := 0, len(runs)-1; i < j; i, j = i+1, j-1 {
		runs[i], runs[j] = runs[j], runs[i]
	}
	for i := range runs {
		if runs[i].Labels, err = s.labels(ctx, runs[i].ID); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

func (s *sqlStore) Get(ctx context.Context, id int64) (*Run, error) {
	row := s.db.QueryRowContext(ctx, s.q("SELECT "+listColumns+", config, host, result FROM runs WHERE id = ?"), id)
	var r Run
	if err := s.scan(row, &r, true); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("reading run %d from %s: %w", id, s.location, err)
	}
	var err error
	if r.Labels, err = s.labels(ctx, id); err != nil {
		return nil, err
	}
	return &r, nil
}

func (s *sqlStore) Latest(ctx context.Context, f Filter) (*Run, error) {
	f.Limit = 1
	runs, err := s.List(ctx, f)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, ErrNotFound
	}
	return s.Get(ctx, runs[0].ID)
}

// labels reads one run's labels.
func (s *sqlStore) labels(ctx context.Context, id int64) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, s.q("SELECT key, value FROM run_labels WHERE run_id = ?"), id)
	if err != nil {
		return nil, fmt.Errorf("reading the labels of run %d from %s: %w", id, s.location, err)
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("reading the labels of run %d from %s: %w", id, s.location, err)
		}
		m[k] = v
	}
	return m, rows.Err()
}

// scan reads a row of listColumns (and config, host, result when full).
func (s *sqlStore) scan(row interface{ Scan(...any) error }, r *Run, full bool) error {
	var started, saved any
	dest := []any{&r.ID, &r.Kind, &started, &saved, &r.Version, &r.Target, &r.Summary}
	var cfg, host, res []byte
	if full {
		dest = append(dest, &cfg, &host, &res)
	}
	if err := row.Scan(dest...); err != nil {
		return err
	}
	var err error
	if r.StartedAt, err = s.d.scanTime(started); err != nil {
		return err
	}
	if r.SavedAt, err = s.d.scanTime(saved); err != nil {
		return err
	}
	if full {
		r.Config, r.Host, r.Result = cfg, host, res
	}
	return nil
}
