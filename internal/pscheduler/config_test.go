package pscheduler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "wirebench.conf")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	c, err := LoadConfig(filepath.Join(dir, "absent"))
	if err != nil || c.serverPort() != 5001 || c.serverWait() != time.Second {
		t.Errorf("absent file: %+v, %v; want the defaults", c, err)
	}
	c, err = LoadConfig(write(`{"server-port":5999,"server-wait":"PT2.5S","devices":[{"dest":"198.18.0.0/15","dialect":"raw"},{"dest":"198.18.0.0/24","dialect":"iperf2-legacy","port":5002},{"dest":"Board.example","dialect":"iperf3"}]}`))
	if err != nil || c.serverPort() != 5999 || c.serverWait() != 2500*time.Millisecond {
		t.Fatalf("%+v, %v", c, err)
	}
	for dest, want := range map[string]string{
		"198.18.0.7":    "iperf2-legacy", // the longer prefix
		"198.18.1.7":    "raw",
		"board.example": "iperf3", // host names match without case
		"192.0.2.1":     "iperf2", // no match: a wirebench or iperf 2 server
		"ps.example":    "iperf2",
	} {
		if _, got := c.dialectFor(dest); got != want {
			t.Errorf("dialect for %s = %s, want %s", dest, got, want)
		}
	}
	for body, want := range map[string]string{
		`{"devices":[{"dest":"x","dialect":"zperf9"}]}`: "zperf9",
		`{"devices":[{"dialect":"raw"}]}`:               "no dest",
		`{"server-port":70000}`:                         "70000",
		`{"server-wait":"1s"}`:                          "server-wait",
		`{"server_port":5001}`:                          "server_port",
		`{"devices":`:                                   "reading",
	} {
		if _, err := LoadConfig(write(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("config %s: %v, want an error naming %q", body, err, want)
		}
	}
}
