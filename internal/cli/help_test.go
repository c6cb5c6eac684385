package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestHelpTexts checks every subcommand's help: it has an Examples section,
// every flag's value name is one word (pflag takes the first `quoted`
// phrase of a usage as the value name, so a quoted command line mangles
// it), and no flag line states two defaults.
func TestHelpTexts(t *testing.T) {
	valueName := regexp.MustCompile(`^[A-Za-z0-9_-]*$`)
	for _, cmd := range newRootCmd(&env{}).Commands() {
		if strings.TrimSpace(cmd.Example) == "" {
			t.Errorf("%s: no Examples in its help", cmd.Name())
		}
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			name, _ := pflag.UnquoteUsage(f)
			if !valueName.MatchString(name) {
				t.Errorf("%s --%s: value name %q is not one word", cmd.Name(), f.Name, name)
			}
		})
		if f := cmd.Flags().Lookup("medium"); f != nil {
			if name, _ := pflag.UnquoteUsage(f); name != "NAME" {
				t.Errorf("%s --medium: value name %q, want NAME", cmd.Name(), name)
			}
		}
		for _, line := range strings.Split(cmd.Flags().FlagUsages(), "\n") {
			if strings.Count(line, "(default") > 1 {
				t.Errorf("%s: two defaults in %q", cmd.Name(), strings.TrimSpace(line))
			}
		}
	}
}
