package repotest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/linerate"
)

// TestDocLinksStayInside: every relative link of README.md and docs/*.md
// (a Markdown link, or a path in backquotes that starts with ../) names a
// file of this repository that exists: a link outside it works on one
// machine only.
func TestDocLinksStayInside(t *testing.T) {
	root := repoRoot(t)
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"))
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	quoted := regexp.MustCompile("`(\\.\\./[^`\\s]*)`")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var targets []string
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			targets = append(targets, m[1])
		}
		for _, m := range quoted.FindAllStringSubmatch(string(b), -1) {
			targets = append(targets, m[1])
		}
		rel, _ := filepath.Rel(root, f)
		for _, target := range targets {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, _, _ := strings.Cut(target, "#")
			abs := filepath.Join(filepath.Dir(f), path)
			if inside, err := filepath.Rel(root, abs); err != nil || strings.HasPrefix(inside, "..") {
				t.Errorf("%s links %s, outside the repository", rel, target)
				continue
			}
			if _, err := os.Stat(abs); err != nil {
				t.Errorf("%s links %s, which does not exist", rel, target)
			}
		}
	}
}

// TestREADMELayoutRowsOnce: each row of the README's package table names
// its packages once.
func TestREADMELayoutRowsOnce(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(b), "\n## Layout\n")
	if !ok {
		t.Fatal("README.md has no Layout section")
	}
	layout, _, _ = strings.Cut(layout, "\n## ")
	seen := map[string]bool{}
	for _, line := range strings.Split(layout, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || strings.Trim(cells[1], " -") == "" || strings.TrimSpace(cells[1]) == "package" {
			continue
		}
		name := strings.TrimSpace(cells[1])
		if seen[name] {
			t.Errorf("README.md's Layout lists %s twice", name)
		}
		seen[name] = true
	}
	if len(seen) == 0 {
		t.Fatal("no rows read from README.md's Layout table")
	}
}

// TestLabHostsPingFloor: docs/lab-hosts.md states the least round trip of
// a 65,500-byte ping on 100 Mbit/s Ethernet as linerate (and so `wirebench
// calc` and docs/calc.md) computes it, inter-frame gap included, and never
// the figure without the gap.
func TestLabHostsPingFloor(t *testing.T) {
	m, err := linerate.LookupMedium("eth100")
	if err != nil {
		t.Fatal(err)
	}
	e, err := linerate.AnalyzeEcho(m, linerate.Stack{}, 65500)
	if err != nil {
		t.Fatal(err)
	}
	with := fmt.Sprintf("%.3f ms", e.RoundTripWire*1e3)
	without := fmt.Sprintf("%.2f ms", 2*e.NoGapBytes*8/m.BitRate*1e3)
	root := repoRoot(t)
	for _, doc := range []string{"docs/lab-hosts.md", "docs/calc.md"} {
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), with) {
			t.Errorf("%s does not state the %s a 65,500-byte ping needs on eth100", doc, with)
		}
		if strings.Contains(string(b), without) {
			t.Errorf("%s states %s, the round trip counted without the inter-frame gap; the wire needs %s", doc, without, with)
		}
	}
}
