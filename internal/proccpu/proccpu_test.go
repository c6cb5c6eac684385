package proccpu

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A line of /proc/PID/stat whose command name holds a space and a
// parenthesis: utime 1234, stime 66 (13.00 s), started 500 s after boot.
const stat = "4711 (wire bench) x) S 1 4711 4711 0 -1 4194560 100 0 0 0 1234 66 0 0 25 5 7 0 50000 123456 789 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"

func TestParseStat(t *testing.T) {
	u, err := parseStat(4711, stat, 1500*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if u.CPU != 13*time.Second || u.Age != 1000*time.Second {
		t.Fatalf("cpu %v age %v, want 13s and 1000s", u.CPU, u.Age)
	}
	if got, want := u.String(), "13.00 s of CPU in 16m40s (1.30 % of a core)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestParseStatErrors(t *testing.T) {
	for _, s := range []string{"4711 wirebench S 1", "4711 (wb) S 1 2 3", strings.Replace(stat, " 1234 ", " x ", 1)} {
		if _, err := parseStat(4711, s, time.Hour); err == nil {
			t.Errorf("parseStat(%q) gave no error", s)
		}
	}
	if u, err := parseStat(4711, stat, 10*time.Second); err != nil || u.Age != 0 || u.Share() != 0 {
		t.Errorf("uptime before the start: %+v %v, want age 0 and share 0", u, err)
	}
}

func TestParseUptime(t *testing.T) {
	if d, err := parseUptime("1500.25 2900.10\n"); err != nil || d != 1500250*time.Millisecond {
		t.Errorf("parseUptime = %v %v", d, err)
	}
	for _, s := range []string{"", "x 1", "-1 2"} {
		if _, err := parseUptime(s); err == nil {
			t.Errorf("parseUptime(%q) gave no error", s)
		}
	}
}

// TestReadSelf reads this process (it may be younger than /proc's 10 ms
// resolution, so its age may read 0).
func TestReadSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	u, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if u.PID != os.Getpid() || u.CPU < 0 || u.Age < 0 {
		t.Errorf("Read(self) = %+v", u)
	}
}
