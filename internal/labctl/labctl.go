// Package labctl keeps the labs `wirebench lab` makes: their state on disk
// (/run/wirebench), the processes it starts in them (the relays of a device
// model and the exact wire's forwarder in host r, and the commands of `lab
// exec`), their status, the checking of `lab up`'s options and the text
// the lab commands print. The lab's namespaces, links and qdiscs are
// netlab's; the flags, the choice of text or JSON and the exit codes are
// the cli's.
// Like netlab it is set apart from the product: only the cli and tests
// import it.
package labctl

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/wirebench/wirebench/internal/netlab"
)

// StateDir holds one state file per lab that is up: what `lab up` created,
// for `lab status` (the kernel's view is what `lab down` acts on, so a lost
// state file loses nothing), and the files of the processes it started.
const StateDir = "/run/wirebench"

// DownGrace is how long `lab down` waits for processes in the lab to end
// after SIGTERM before it sends SIGKILL.
const DownGrace = 3 * time.Second

// DefaultName is the name of the lab when --name is not given.
const DefaultName = "wb"

// State is the state file, /run/wirebench/lab-NAME.json.
type State struct {
	Schema  string `json:"schema"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Net     string `json:"net"`
	Medium  string `json:"medium,omitempty"`
	RateBPS uint64 `json:"rate_bps,omitempty"`
	// Burst is the shaper's bucket in bytes (netlab's default, 1 ms of
	// the rate, unless --burst said otherwise).
	Burst   int             `json:"burst,omitempty"`
	MTU     int             `json:"mtu"`
	Created time.Time       `json:"created"`
	Hosts   map[string]Host `json:"hosts"`
	// Model is the relay in the middle host r (`lab up --model`).
	Model *Model `json:"model,omitempty"`
	// Wire is the exact wire's forwarder in r (`lab up --wire exact`).
	Wire *Wire `json:"wire,omitempty"`
	// Filler is the filled wire's filler (`lab up`'s default wire).
	Filler *Wire `json:"filler,omitempty"`
}

// Host is one host of a lab in the state file.
type Host struct {
	Namespace string `json:"namespace"`
	Ifname    string `json:"ifname"`
	Addr      string `json:"addr"`
}

// StatePath returns the state file of lab name.
func StatePath(name string) string { return filepath.Join(StateDir, "lab-"+name+".json") }

// NameFlag returns the --name option that selects lab name on a wirebench
// command line, or "" for the default lab.
func NameFlag(name string) string {
	if name == DefaultName {
		return ""
	}
	return " --name " + name
}

// Available says, in the one line a user sees, why this system cannot make
// labs, or nil when it can.
func Available() error {
	err := netlab.Available()
	if errors.Is(err, netlab.ErrNotSupported) {
		return errors.New("wirebench lab needs Linux network namespaces; this system has none")
	}
	if err != nil {
		return fmt.Errorf("lab needs root (or CAP_SYS_ADMIN and CAP_NET_ADMIN) and iproute2's ip and tc: %w", err)
	}
	return nil
}

// WriteState writes st as the state file of lab st.Name, creating StateDir.
func WriteState(st State) error {
	if err := os.MkdirAll(StateDir, 0o755); err != nil {
		return fmt.Errorf("writing lab state: %w", err)
	}
	return WriteStateFile(StatePath(st.Name), st)
}

// WriteStateFile writes st to path, whole or not at all (through a
// temporary file renamed over it).
func WriteStateFile(path string, st State) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("writing lab state: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing lab state: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing lab state: %w", err)
	}
	return nil
}

// ReadState reads the state file of lab name. A missing file gives
// os.ReadFile's error, which names the file (errors.Is os.ErrNotExist).
func ReadState(name string) (State, error) { return ReadStateFile(StatePath(name)) }

// ReadStateFile reads the state file at path. A missing or unreadable file
// gives os.ReadFile's error, which names the file.
func ReadStateFile(path string) (State, error) {
	var st State
	b, err := os.ReadFile(path)
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("reading %s: %w", path, err)
	}
	return st, nil
}

// Complete reports whether every namespace the state file names is among
// nss (the lab's namespaces that exist).
func Complete(st State, nss []string) bool {
	for _, h := range st.Hosts {
		if !slices.Contains(nss, h.Namespace) {
			return false
		}
	}
	return len(st.Hosts) > 0
}
