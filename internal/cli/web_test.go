package cli

import (
	"strings"
	"testing"
)

func TestWebUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"server", "--probe-allow", "127.0.0.0/8"}, "--probe-allow needs --web"},
		{[]string{"server", "--web", "localhost"}, "invalid --web"},
		{[]string{"server", "--web", "127.0.0.1:http"}, "invalid --web"},
		{[]string{"server", "--web", "70000"}, "invalid --web"},
		{[]string{"server", "--web", "8080", "--probe-allow", "lab"}, "invalid --probe-allow"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) { wantUsageError(t, tt.args, tt.want) })
	}
}

func TestWebAddr(t *testing.T) {
	for in, want := range map[string]string{
		"8080":           "127.0.0.1:8080",
		":8080":          "127.0.0.1:8080",
		"0.0.0.0:9000":   "0.0.0.0:9000",
		"[::1]:9000":     "[::1]:9000",
		"localhost:9000": "localhost:9000",
	} {
		got, err := webAddr(in)
		if err != nil || got != want {
			t.Errorf("webAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
