// Package docgen writes wirebench's man pages and shell completions from
// its command tree, so that what a package installs is the commands' own
// help and never drifts from it. scripts/release runs it through the
// hidden `wirebench gen-docs DIR`.
package docgen

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
	"github.com/wirebench/wirebench/internal/version"
)

// Command is the hidden `wirebench gen-docs DIR` that scripts/release
// runs: Write of the tree it is part of, as this build's version.
func Command() *cobra.Command {
	return &cobra.Command{
		Use:     "gen-docs DIR",
		Hidden:  true,
		Short:   "Write man pages and shell completions into DIR (scripts/release)",
		Example: "  wirebench gen-docs dist/docs",
		Args:    cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, a []string) error {
			return Write(c.Root(), a[0], "wirebench "+version.String())
		},
	}
}

// Write writes into dir the man pages of root and every command under it
// (man/wirebench.1, man/wirebench-client.1, …, section 1) and root's
// completions for bash, zsh and fish (completions/wirebench.bash,
// completions/_wirebench, completions/wirebench.fish). The pages' date is
// SOURCE_DATE_EPOCH's when it is set (cobra reads it), so a release of
// one commit writes the same bytes; source names the build ("wirebench
// v1.2.3").
func Write(root *cobra.Command, dir, source string) error {
	root.DisableAutoGenTag = true // the tag carries the day it was made
	for _, c := range root.Commands() {
		c.DisableAutoGenTag = true
	}
	man := filepath.Join(dir, "man")
	comp := filepath.Join(dir, "completions")
	for _, d := range []string{man, comp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("making %s: %w", d, err)
		}
	}
	if err := writeCompletions(root, comp); err != nil {
		return err
	}
	escapeStars(root)
	header := &doc.GenManHeader{Section: "1", Source: source, Manual: "wirebench manual"}
	if err := doc.GenManTree(root, header, man); err != nil {
		return fmt.Errorf("writing man pages into %s: %w", man, err)
	}
	return nil
}

// escapeStars escapes the asterisks of every flag's usage ("usb*-eem"),
// which the man pages' markdown would otherwise take for emphasis. It
// changes the tree, so Write calls it last.
func escapeStars(c *cobra.Command) {
	for _, fs := range []*pflag.FlagSet{c.LocalFlags(), c.PersistentFlags()} {
		fs.VisitAll(func(f *pflag.Flag) { f.Usage = strings.ReplaceAll(f.Usage, "*", `\*`) })
	}
	for _, sub := range c.Commands() {
		escapeStars(sub)
	}
}

// writeCompletions writes root's bash, zsh and fish completions into dir.
func writeCompletions(root *cobra.Command, comp string) error {
	for name, gen := range map[string]func(*bytes.Buffer) error{
		"wirebench.bash": func(b *bytes.Buffer) error { return root.GenBashCompletionV2(b, true) },
		"_wirebench":     func(b *bytes.Buffer) error { return root.GenZshCompletion(b) },
		"wirebench.fish": func(b *bytes.Buffer) error { return root.GenFishCompletion(b, true) },
	} {
		var b bytes.Buffer
		if err := gen(&b); err != nil {
			return fmt.Errorf("generating %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(comp, name), b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
}
