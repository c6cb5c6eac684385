package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/store"
)

// TestReportOfSavedRunsNamesThemByTheirLabels: `report link=eth
// link=usb` compares the newest run of each, one bar per run named by the
// label that tells them apart (not by the labels they share), the second
// with its ratio to the first.
func TestReportOfSavedRunsNamesThemByTheirLabels(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "runs.db")
	for _, r := range []struct{ file, link string }{
		{"client-iperf3-20M.json", "eth"}, {"client-iperf3-20M-tbf16M.json", "usb"},
	} {
		doc, err := os.ReadFile(filepath.Join("..", "report", "htmlreport", "testdata", r.file))
		if err != nil {
			t.Fatal(err)
		}
		run := &store.Run{Kind: store.KindTest, Labels: map[string]string{"link": r.link, "role": "client", "protocol": "udp"},
			StartedAt: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Target: "127.0.0.1:5201", Summary: r.file, Result: doc}
		if _, err := store.Save(context.Background(), db, run); err != nil {
			t.Fatalf("saving %s: %v", r.file, err)
		}
	}
	html := filepath.Join(dir, "r.html")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"report", "--db", db, "link=eth", "link=usb", "-o", html}, &out, &errb); code != exitOK {
		t.Fatalf("report: exit %d\n%s", code, errb.String())
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	bars := regexp.MustCompile(`<g class="wb-bar" data-label="([^"]*)" data-mbps="[0-9.]+" data-ratio="([0-9.]+)"`).FindAllSubmatch(page, -1)
	if len(bars) != 2 || string(bars[0][1]) != "link=eth" || string(bars[1][1]) != "link=usb" ||
		string(bars[0][2]) != "1.000" || string(bars[1][2]) != "0.769" {
		t.Errorf("comparison bars %q, want link=eth at 1.000 and link=usb at 0.769", bars)
	}
}
