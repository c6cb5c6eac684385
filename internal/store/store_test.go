package store

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// TestStoreSuite runs the one suite against every implementation: SQLite
// always, PostgreSQL when WIREBENCH_TEST_PG names a database (in CI it must).
func TestStoreSuite(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		n := 0
		suite(t, func(t *testing.T) string {
			n++
			return filepath.Join(dir, fmt.Sprintf("s%d", n), "results.db")
		})
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := os.Getenv("WIREBENCH_TEST_PG")
		if dsn == "" {
			if os.Getenv("CI") == "true" {
				t.Fatal("CI=true but WIREBENCH_TEST_PG is not set: .ci/run must start PostgreSQL and export its DSN")
			}
			t.Skip("WIREBENCH_TEST_PG is not set (a postgres:// DSN of a database the test may create schemas in); see docs/store.md")
		}
		suite(t, func(t *testing.T) string { return pgSchema(t, dsn) })
	})
}

// pgSchema creates a fresh schema in the database at dsn, dropped at the
// end of the test, and returns a DSN whose tables live in it.
func pgSchema(t *testing.T, dsn string) string {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	name := fmt.Sprintf("wbtest_%d_%d", os.Getpid(), time.Now().UnixNano())
	if _, err := db.Exec("CREATE SCHEMA " + name); err != nil {
		t.Fatalf("creating a test schema in %s: %v", redact(dsn), err)
	}
	t.Cleanup(func() {
		if _, err := db.Exec("DROP SCHEMA " + name + " CASCADE"); err != nil {
			t.Errorf("dropping test schema %s: %v", name, err)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// suite is the behaviour every Store must have. fresh returns the URL of
// a new, empty store for each call.
func suite(t *testing.T, fresh func(*testing.T) string) {
	ctx := context.Background()
	open := func(t *testing.T, u string) Store {
		t.Helper()
		s, err := Open(ctx, u)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}

	t.Run("RoundTrip", func(t *testing.T) {
		s := open(t, fresh(t))
		started := time.Date(2026, 11, 30, 9, 15, 1, 123456000, time.UTC)
		// Key order and spacing as wirebench wrote them must come back.
		doc := `{"schema":"wirebench/1","kind":"test","z":1,"a":[1.5,2],"intervals":[{"bits_per_second":95700000}]}`
		in := &Run{Kind: KindTest, Labels: map[string]string{"device": "pic32", "link": "usb", "empty": ""},
			StartedAt: started, Version: "v1.2.3", Target: "192.0.2.1:5001", Summary: "udp send 95.70 Mbit/s",
			Config: json.RawMessage(`{"command":"client","flags":{"udp":"true"}}`), Host: json.RawMessage(`{"os":"linux"}`),
			Result: json.RawMessage(doc)}
		id, err := s.Save(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if id <= 0 {
			t.Fatalf("id %d", id)
		}
		got, err := s.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != id || got.Kind != in.Kind || got.Version != in.Version || got.Target != in.Target || got.Summary != in.Summary {
			t.Errorf("got %+v", got)
		}
		if !got.StartedAt.Equal(started) {
			t.Errorf("started %v, want %v", got.StartedAt, started)
		}
		if time.Since(got.SavedAt) > time.Minute || got.SavedAt.Before(started) {
			t.Errorf("saved_at %v", got.SavedAt)
		}
		if string(got.Result) != doc {
			t.Errorf("result\n%s\nwant\n%s", got.Result, doc)
		}
		if string(got.Config) != string(in.Config) || string(got.Host) != string(in.Host) {
			t.Errorf("config %s host %s", got.Config, got.Host)
		}
		if result.FormatLabels(got.Labels) != "device=pic32,empty=,link=usb" {
			t.Errorf("labels %v", got.Labels)
		}
		if _, err := s.Get(ctx, id+1000); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get of a missing id: %v, want ErrNotFound", err)
		}
	})

	t.Run("Filters", func(t *testing.T) {
		s := open(t, fresh(t))
		base := time.Now().Add(-10 * time.Hour).UTC()
		save := func(kind string, hoursAgo int, labels ...string) int64 {
			t.Helper()
			l, err := ParseLabels(labels)
			if err != nil {
				t.Fatal(err)
			}
			id, err := s.Save(ctx, &Run{Kind: kind, Labels: l, StartedAt: base.Add(time.Duration(10-hoursAgo) * time.Hour),
				Result: json.RawMessage(`{"kind":"` + kind + `"}`)})
			if err != nil {
				t.Fatal(err)
			}
			return id
		}
		a := save(KindTest, 9, "device=pic32", "link=usb")
		b := save(KindTest, 5, "device=pic32", "link=eth")
		c := save(KindPing, 3, "device=pic32", "link=usb")
		d := save(KindTest, 1, "device=esp32", "link=usb")
		ids := func(f Filter) string {
			t.Helper()
			runs, err := s.List(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, r := range runs {
				if len(r.Result) != 0 {
					t.Errorf("List returned run %d with its result", r.ID)
				}
				out = append(out, strconv.FormatInt(r.ID, 10))
			}
			return strings.Join(out, ",")
		}
		str := func(ids ...int64) string {
			var out []string
			for _, id := range ids {
				out = append(out, strconv.FormatInt(id, 10))
			}
			return strings.Join(out, ",")
		}
		for _, tc := range []struct {
			name string
			f    Filter
			want string
		}{
			{"all, oldest first", Filter{}, str(a, b, c, d)},
			{"one label", Filter{Labels: map[string]string{"device": "pic32"}}, str(a, b, c)},
			{"two labels", Filter{Labels: map[string]string{"device": "pic32", "link": "usb"}}, str(a, c)},
			{"no match", Filter{Labels: map[string]string{"device": "nrf"}}, ""},
			{"kind", Filter{Kind: KindTest}, str(a, b, d)},
			{"since", Filter{Since: base.Add(4 * time.Hour)}, str(b, c, d)},
			{"kind and label and since", Filter{Kind: KindTest, Labels: map[string]string{"link": "usb"}, Since: base.Add(4 * time.Hour)}, str(d)},
			{"limit keeps the newest", Filter{Limit: 2}, str(c, d)},
		} {
			if got := ids(tc.f); got != tc.want {
				t.Errorf("%s: got [%s], want [%s]", tc.name, got, tc.want)
			}
		}
		l, err := s.Latest(ctx, Filter{Labels: map[string]string{"link": "usb"}, Kind: KindTest})
		if err != nil {
			t.Fatal(err)
		}
		if l.ID != d || string(l.Result) != `{"kind":"test"}` || l.Labels["device"] != "esp32" {
			t.Errorf("Latest: %+v", l)
		}
		if _, err := s.Latest(ctx, Filter{Labels: map[string]string{"device": "nrf"}}); !errors.Is(err, ErrNotFound) {
			t.Errorf("Latest with no match: %v", err)
		}
		sel, err := ParseSelector("device=pic32,kind=test")
		if err != nil {
			t.Fatal(err)
		}
		if r, err := Find(ctx, s, sel); err != nil || r.ID != b {
			t.Errorf("Find(device=pic32,kind=test) = %v, %v; want run %d", r, err, b)
		}
	})

	t.Run("Prune", func(t *testing.T) {
		s := open(t, fresh(t))
		now := time.Now().UTC()
		var ids []int64
		for i, kind := range []string{KindTest, KindPing, KindTest, KindTest, KindPing, KindTest} {
			// Runs 0..5 started 50, 40, … 0 days ago; the even ones labelled lab=a.
			labels := map[string]string{"lab": "b"}
			if i%2 == 0 {
				labels["lab"] = "a"
			}
			id, err := s.Save(ctx, &Run{Kind: kind, Labels: labels, StartedAt: now.Add(-time.Duration(50-10*i) * 24 * time.Hour), Result: json.RawMessage(`{}`)})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		left := func() []int64 {
			runs, err := s.List(ctx, Filter{})
			if err != nil {
				t.Fatal(err)
			}
			var out []int64
			for _, r := range runs {
				out = append(out, r.ID)
			}
			return out
		}
		if _, err := s.Prune(ctx, Prune{}); !errors.Is(err, ErrNothingToPrune) {
			t.Errorf("Prune with no rule: %v, want ErrNothingToPrune", err)
		}
		// Tests older than 25 days: runs 0 and 2.
		if n, err := s.Prune(ctx, Prune{Filter: Filter{Kind: KindTest}, Before: now.Add(-25 * 24 * time.Hour)}); err != nil || n != 2 {
			t.Fatalf("Prune of tests older than 25 days: %d, %v; want 2", n, err)
		}
		if got, want := left(), []int64{ids[1], ids[3], ids[4], ids[5]}; !slices.Equal(got, want) {
			t.Fatalf("after the age rule: %v, want %v", got, want)
		}
		// Of lab=b (1, 3, 5), keep the newest one.
		if n, err := s.Prune(ctx, Prune{Filter: Filter{Labels: map[string]string{"lab": "b"}}, Keep: 1}); err != nil || n != 2 {
			t.Fatalf("Prune keeping 1 of lab=b: %d, %v; want 2", n, err)
		}
		if got, want := left(), []int64{ids[4], ids[5]}; !slices.Equal(got, want) {
			t.Fatalf("after the count rule: %v, want %v", got, want)
		}
		if _, err := s.Get(ctx, ids[3]); !errors.Is(err, ErrNotFound) {
			t.Errorf("a pruned run is still there: %v", err)
		}
		// Either rule: keep 5 of all, or older than 5 days: run 4 goes.
		if n, err := s.Prune(ctx, Prune{Before: now.Add(-5 * 24 * time.Hour), Keep: 5}); err != nil || n != 1 {
			t.Fatalf("Prune by either rule: %d, %v; want 1", n, err)
		}
		if l, err := s.(*sqlStore).labels(ctx, ids[4]); err != nil || len(l) != 0 {
			t.Errorf("a pruned run's labels are left: %v, %v", l, err)
		}
	})

	t.Run("BadInputLosesNothing", func(t *testing.T) {
		s := open(t, fresh(t))
		good, err := s.Save(ctx, &Run{Kind: KindTest, Result: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []*Run{
			{Kind: ""},
			{Kind: KindTest, Result: json.RawMessage(`{"truncated":`)},
			{Kind: KindTest, Labels: map[string]string{"": "x"}},
		} {
			if _, err := s.Save(ctx, bad); err == nil {
				t.Errorf("Save(%+v) succeeded", bad)
			}
		}
		runs, err := s.List(ctx, Filter{})
		if err != nil || len(runs) != 1 || runs[0].ID != good {
			t.Errorf("after bad saves: %v, %v", runs, err)
		}
	})

	t.Run("ConcurrentFirstOpen", func(t *testing.T) {
		// Several wirebenches opening one new store at the same moment (a
		// server and clients started together) all succeed.
		for round := range 2 {
			u := fresh(t)
			var wg sync.WaitGroup
			errs := make(chan error, 6)
			for range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					s, err := Open(ctx, u)
					if err == nil {
						_, err = s.Save(ctx, &Run{Kind: KindTest})
						s.Close()
					}
					errs <- err
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Errorf("round %d: %v", round, err)
				}
			}
		}
	})

	t.Run("ConcurrentAndReopen", func(t *testing.T) {
		u := fresh(t)
		s := open(t, u)
		const n = 24
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.Save(ctx, &Run{Kind: KindTest, Labels: map[string]string{"i": strconv.Itoa(i)}, Result: json.RawMessage(`{"i":` + strconv.Itoa(i) + `}`)})
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
		// A second store on the same database (another wirebench) sees all
		// runs, and opening migrates nothing twice.
		s2 := open(t, u)
		runs, err := s2.List(ctx, Filter{})
		if err != nil || len(runs) != n {
			t.Fatalf("reopened: %d runs, %v; want %d", len(runs), err, n)
		}
		r, err := s2.Latest(ctx, Filter{Labels: map[string]string{"i": "7"}})
		if err != nil || string(r.Result) != `{"i":7}` {
			t.Errorf("run i=7: %v, %v", r, err)
		}
	})
}

func TestOpenDefaultPathUsesXDG(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_DATA_HOME", dir)
	p, err := DefaultPath()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "wirebench", "results.db"); p != want {
		t.Fatalf("DefaultPath %q, want %q", p, want)
	}
	s, err := Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Location() != p {
		t.Errorf("Location %q", s.Location())
	}
	if _, err := os.Stat(p); err != nil {
		t.Errorf("the default store was not created: %v", err)
	}
}

func TestOpenUnwritable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A path under a regular file can never be created, even by root.
	if _, err := Open(context.Background(), filepath.Join(file, "results.db")); err == nil || !strings.Contains(err.Error(), "results store") {
		t.Errorf("Open under a file: %v", err)
	}
	// A file that is not a database.
	if err := os.WriteFile(filepath.Join(dir, "junk.db"), []byte(strings.Repeat("not sqlite ", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), filepath.Join(dir, "junk.db")); err == nil {
		t.Error("Open of a non-database file succeeded")
	}
	// A PostgreSQL server that is down.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := Open(ctx, "postgres://u:secret@127.0.0.1:1/db?connect_timeout=2"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("Open of a closed port: %v (must fail, without the password)", err)
	}
}

func TestParseSelector(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		id       int64
		bad      bool
	}{
		{in: "42", id: 42},
		{in: "#7", id: 7},
		{in: "0", bad: true},
		{in: "device=pic32,link=usb", want: "device=pic32,link=usb"},
		{in: "device=pic32,kind=ping", want: "device=pic32"},
		{in: "nolabel", bad: true},
		{in: "a=1,a=2", bad: true},
		{in: "=x", bad: true},
	} {
		sel, err := ParseSelector(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseSelector(%q) = %+v, want an error", tc.in, sel)
			}
			continue
		}
		if err != nil || sel.ID != tc.id || result.FormatLabels(sel.Filter.Labels) != tc.want {
			t.Errorf("ParseSelector(%q) = %+v, %v", tc.in, sel, err)
		}
	}
}

// TestRunsSurviveKill9 kills (SIGKILL) a process in the middle of saving
// large runs, then checks that the database opens, is intact, and holds
// every run the process had reported saved.
func TestRunsSurviveKill9(t *testing.T) {
	if os.Getenv("WB_STORE_KILL_HELPER") != "" {
		t.Skip("helper")
	}
	path := filepath.Join(t.TempDir(), "results.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKill9Helper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "WB_STORE_KILL_HELPER="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	saved := map[int64]int{} // id -> payload size the helper reported
	sc := bufio.NewScanner(out)
	deadline := time.Now().Add(60 * time.Second)
	for sc.Scan() && len(saved) < 6 && time.Now().Before(deadline) {
		var id int64
		var size int
		if _, err := fmt.Sscanf(sc.Text(), "saved %d %d", &id, &size); err == nil {
			saved[id] = size
		}
	}
	// Kill while it is writing the next run.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if len(saved) < 6 {
		t.Fatalf("the helper reported only %d saved runs before it was killed", len(saved))
	}
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("after kill -9 the store does not open: %v", err)
	}
	defer s.Close()
	for id, size := range saved {
		r, err := s.Get(context.Background(), id)
		if err != nil {
			t.Errorf("run %d, reported saved before the kill: %v", id, err)
			continue
		}
		var doc struct{ Pad string }
		if err := json.Unmarshal(r.Result, &doc); err != nil || len(doc.Pad) != size {
			t.Errorf("run %d: result damaged (%d bytes, %v)", id, len(r.Result), err)
		}
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check: %q, %v", check, err)
	}
}

// TestKill9Helper is the process TestRunsSurviveKill9 kills: it saves
// 1 MiB runs one after another (at most 2000, at most 60 s) and prints each
// id once Save has returned.
func TestKill9Helper(t *testing.T) {
	path := os.Getenv("WB_STORE_KILL_HELPER")
	if path == "" {
		t.Skip("run by TestRunsSurviveKill9")
	}
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 1<<20)
	end := time.Now().Add(60 * time.Second)
	for i := 0; i < 2000 && time.Now().Before(end); i++ {
		doc, _ := json.Marshal(map[string]string{"Pad": pad[:len(pad)-i]})
		id, err := s.Save(context.Background(), &Run{Kind: KindTest, Labels: map[string]string{"i": strconv.Itoa(i)}, Result: doc})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("saved %d %d\n", id, len(pad)-i)
	}
}
