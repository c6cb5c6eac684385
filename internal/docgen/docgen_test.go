package docgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func tree() *cobra.Command {
	root := &cobra.Command{Use: "wirebench", Short: "Measure"}
	sub := &cobra.Command{Use: "calc", Short: "Work out", Long: "calc works out.", Run: func(*cobra.Command, []string) {}}
	sub.Flags().Int("aggregate", 1, "frames per USB transfer (usb*-eem)")
	hidden := &cobra.Command{Use: "gen-docs", Hidden: true, Run: func(*cobra.Command, []string) {}}
	root.AddCommand(sub, hidden)
	return root
}

// Every visible command gets a page of its own help, hidden ones none; the
// three completions are written; a flag's asterisk reads as one; the date
// is SOURCE_DATE_EPOCH's, so two runs write the same bytes.
func TestWrite(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		if err := Write(tree(), dir, "wirebench v1.2.3"); err != nil {
			t.Fatal(err)
		}
	}
	page, err := os.ReadFile(filepath.Join(a, "man", "wirebench-calc.1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`.TH "WIREBENCH-CALC" "1" "Nov 2023" "wirebench v1.2.3"`, "calc works out.", "(usb*-eem)"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("wirebench-calc.1 lacks %q:\n%s", want, page)
		}
	}
	if _, err := os.Stat(filepath.Join(a, "man", "wirebench-gen-docs.1")); err == nil {
		t.Error("a hidden command got a man page")
	}
	for _, name := range []string{"man/wirebench.1", "man/wirebench-calc.1", "completions/wirebench.bash", "completions/_wirebench", "completions/wirebench.fish"} {
		x, errA := os.ReadFile(filepath.Join(a, name))
		y, errB := os.ReadFile(filepath.Join(b, name))
		if errA != nil || errB != nil || len(x) == 0 || string(x) != string(y) {
			t.Errorf("%s: %v %v, %d bytes, the same both runs: %v", name, errA, errB, len(x), string(x) == string(y))
		}
	}
	if bash, _ := os.ReadFile(filepath.Join(a, "completions", "wirebench.bash")); !strings.Contains(string(bash), "__complete") {
		t.Error("the bash completion does not ask wirebench __complete")
	}
}
