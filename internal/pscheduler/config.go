package pscheduler

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/session"
)

// DefaultConfigPath is where pScheduler tools keep their configuration.
const DefaultConfigPath = "/etc/pscheduler/tool/wirebench.conf"

// Config is the tool's configuration file (JSON). pScheduler's throughput
// spec admits no tool-specific fields, so the iperf dialect and port of a
// device that runs no pScheduler of its own (a single-ended test) are
// looked up here by the test's destination.
type Config struct {
	// ServerPort is where participant 1 (the receiving pScheduler host)
	// runs its wirebench server; default 5001.
	ServerPort int `json:"server-port,omitempty"`
	// ServerWait is how long participant 0 waits after the start time for
	// participant 1's server to come up, as an ISO 8601 duration; default
	// PT1S. Refused connections are tried again for 3 s after it.
	ServerWait string `json:"server-wait,omitempty"`
	// Devices maps destinations to the dialect they speak.
	Devices []Device `json:"devices,omitempty"`
}

// Device says how to speak to one destination, or to a network of them.
type Device struct {
	// Dest is a host name, an address or a CIDR prefix matched against
	// the spec's dest (a prefix only when the dest is an address).
	Dest string `json:"dest"`
	// Dialect is iperf2, iperf2-legacy, raw or iperf3.
	Dialect string `json:"dialect"`
	// Port is the device's iperf port when the spec has no
	// single-ended-port; 0 means the dialect's default.
	Port int `json:"port,omitempty"`
}

// LoadConfig reads the configuration at path; a file that does not exist
// gives the defaults.
func LoadConfig(path string) (Config, error) {
	var c Config
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("reading tool configuration: %w", err)
	}
	if strings.TrimSpace(string(b)) == "" {
		return c, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("reading tool configuration %s: %w", path, err)
	}
	return c, c.Validate()
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.ServerPort < 0 || c.ServerPort > 65535 {
		return fmt.Errorf("server-port %d out of range 1-65535", c.ServerPort)
	}
	if c.ServerWait != "" {
		if _, err := ParseDuration(c.ServerWait); err != nil {
			return fmt.Errorf("server-wait: %w", err)
		}
	}
	for i, d := range c.Devices {
		if !dialect.Known(d.Dialect) {
			return fmt.Errorf("devices[%d]: unknown dialect %q (want %s)", i, d.Dialect, dialect.OneOf(dialect.Names()...))
		}
		if d.Dest == "" {
			return fmt.Errorf("devices[%d]: no dest", i)
		}
		if d.Port < 0 || d.Port > 65535 {
			return fmt.Errorf("devices[%d]: port %d out of range 1-65535", i, d.Port)
		}
	}
	return nil
}

func (c Config) serverPort() int {
	if c.ServerPort == 0 {
		return session.DefaultPort
	}
	return c.ServerPort
}

func (c Config) serverWait() time.Duration {
	d, err := ParseDuration(c.ServerWait)
	if c.ServerWait == "" || err != nil {
		return time.Second
	}
	return d
}

// device returns the entry for dest: an exact host match first, then the
// longest prefix holding an address dest; ok false when none matches.
func (c Config) device(dest string) (Device, bool) {
	for _, d := range c.Devices {
		if strings.EqualFold(d.Dest, dest) {
			return d, true
		}
	}
	addr, err := netip.ParseAddr(strings.Trim(dest, "[]"))
	if err != nil {
		return Device{}, false
	}
	best, bits := Device{}, -1
	for _, d := range c.Devices {
		if p, err := netip.ParsePrefix(d.Dest); err == nil && p.Contains(addr.Unmap()) && p.Bits() > bits {
			best, bits = d, p.Bits()
		}
	}
	return best, bits >= 0
}

// dialectFor is the dialect a client speaks to dest: the configured
// device's, else iperf2 (a wirebench or iperf 2 server).
func (c Config) dialectFor(dest string) (Device, string) {
	d, ok := c.device(dest)
	if !ok {
		return Device{}, session.DialectIperf2
	}
	return d, d.Dialect
}

// hostOnly strips brackets from an IPv6 literal.
func hostOnly(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		return host
	}
	return strings.Trim(h, "[]")
}
