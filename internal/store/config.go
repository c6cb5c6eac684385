package store

import (
	"net/url"

	"github.com/spf13/pflag"
)

// secretFlags are flags whose values are never saved.
var secretFlags = map[string]bool{"auth-secret": true, "password": true}

// SavedFlagValue is what a run's saved configuration keeps of a flag's
// value: "(not saved)" for a secret that was given, a database URL
// (--db) without its password, any other value as it is.
func SavedFlagValue(name, value string) string {
	switch {
	case secretFlags[name] && value != "":
		return "(not saved)"
	case name == "db":
		return redactURL(value)
	}
	return value
}

// redactURL drops the password from a database URL; anything that does
// not parse as one is kept as it is.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		return u.Redacted()
	}
	return s
}

// CommandConfig is the saved configuration of a run: the command's path,
// its arguments and every flag with its value (defaults included), secrets
// and database passwords left out (SavedFlagValue), and which flags were
// given.
func CommandConfig(path string, fs *pflag.FlagSet) map[string]any {
	flags := map[string]string{}
	var changed []string
	fs.VisitAll(func(f *pflag.Flag) {
		flags[f.Name] = SavedFlagValue(f.Name, f.Value.String())
		if f.Changed {
			changed = append(changed, f.Name)
		}
	})
	return map[string]any{"command": path, "args": fs.Args(), "flags": flags, "changed": changed}
}
