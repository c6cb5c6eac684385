package labgrid

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/labgrid/lgpb"
)

// DefaultPort is the coordinator's port when an address names none
// (labgrid's own default).
const DefaultPort = "20408"

// DefaultCoordinator is the coordinator when neither the spec nor
// LG_COORDINATOR names one (labgrid's own default).
const DefaultCoordinator = "127.0.0.1:" + DefaultPort

// ReleaseTimeout bounds the release of a place at the end of a run, also
// after the run's context was cancelled (Ctrl-C).
const ReleaseTimeout = 5 * time.Second

// Target is a parsed labgrid:PLACE[@HOST[:PORT]] spec.
type Target struct {
	Place       string
	Coordinator string // host:port
}

// ParseTarget parses PLACE[@HOST[:PORT]]; without @ the coordinator is
// LG_COORDINATOR's (as labgrid-client takes it), else 127.0.0.1:20408.
func ParseTarget(s string) (Target, error) {
	place, addr, at := strings.Cut(s, "@")
	if place == "" {
		return Target{}, errors.New("no place name: want labgrid:PLACE[@HOST:PORT]")
	}
	if !at {
		addr = os.Getenv("LG_COORDINATOR")
	}
	if addr == "" {
		addr = DefaultCoordinator
	}
	a, err := CoordinatorAddr(addr)
	if err != nil {
		if !at {
			return Target{}, fmt.Errorf("LG_COORDINATOR: %w", err)
		}
		return Target{}, err
	}
	return Target{Place: place, Coordinator: a}, nil
}

// CoordinatorAddr checks a coordinator address HOST[:PORT] and adds the
// default port.
func CoordinatorAddr(addr string) (string, error) {
	if strings.Contains(addr, "://") {
		return "", fmt.Errorf("coordinator %q: want HOST[:PORT] (labgrid 24 and later speak gRPC; a ws:// crossbar address is from older labgrid)", addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = strings.Trim(addr, "[]"), DefaultPort
	}
	if p, perr := strconv.Atoi(port); host == "" || perr != nil || p < 1 || p > 65535 || strings.ContainsAny(host, "/ ") {
		return "", fmt.Errorf("coordinator %q: want HOST[:PORT]", addr)
	}
	return net.JoinHostPort(host, port), nil
}

// UserName is the "host/user" labgrid-client would use here: LG_HOSTNAME
// and LG_USERNAME override the system's names, as they do for it.
func UserName() string {
	host := os.Getenv("LG_HOSTNAME")
	if host == "" {
		host, _ = os.Hostname()
	}
	name := os.Getenv("LG_USERNAME")
	if name == "" {
		if u, err := user.Current(); err == nil {
			name = u.Username
			if i := strings.LastIndexByte(name, '\\'); i >= 0 { // DOMAIN\user on Windows
				name = name[i+1:]
			}
		}
	}
	return host + "/" + name
}

// SerialPort is a place's NetworkSerialPort resource: the console ser2net
// serves on the exporter.
type SerialPort struct {
	Path     string // exporter/group/class/name
	Host     string
	Port     int
	Speed    int
	Protocol string // "rfc2217" (labgrid's default) or "raw"
}

// Address is the console's host:port.
func (s SerialPort) Address() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// SerialPort waits until the place's NetworkSerialPort is known and
// available with a port (ser2net runs while the place is acquired) and
// returns it. A place with several takes the first by path.
func (c *Client) SerialPort(ctx context.Context, place string) (SerialPort, error) {
	for {
		c.mu.Lock()
		sp, ready, err := c.serialPortLocked(place)
		changed := c.changed
		c.mu.Unlock()
		if err != nil || ready {
			return sp, err
		}
		select {
		case <-changed:
		case <-c.done:
			return sp, c.streamErr()
		case <-ctx.Done():
			return sp, fmt.Errorf("labgrid place %s: its serial port %s is not available with a port (%w)", place, sp.Path, ctx.Err())
		}
	}
}

func (c *Client) serialPortLocked(place string) (SerialPort, bool, error) {
	p := c.placeLocked(place)
	if p == nil {
		return SerialPort{}, false, fmt.Errorf("labgrid place %s was deleted", place)
	}
	var held []string
	for _, path := range p.GetAcquiredResources() {
		parts := strings.Split(path, "/")
		if len(parts) == 4 && parts[2] == "NetworkSerialPort" {
			held = append(held, path)
		}
	}
	if len(held) == 0 {
		return SerialPort{}, false, fmt.Errorf("labgrid place %s holds no NetworkSerialPort (it holds: %s); add one with labgrid-client -p %s add-match EXPORTER/GROUP/NetworkSerialPort",
			place, orNone(p.GetAcquiredResources()), place)
	}
	sort.Strings(held)
	sp := SerialPort{Path: held[0], Speed: 115200, Protocol: "rfc2217"}
	r := c.resources[sp.Path]
	if r == nil || !r.GetAvail() {
		return sp, false, nil
	}
	if v, ok := r.GetExtra()["proxy_required"].GetKind().(*lgpb.MapValue_BoolValue); ok && v.BoolValue {
		return sp, false, fmt.Errorf("labgrid resource %s is reachable only through an SSH proxy to its exporter, which wirebench does not set up; run wirebench where %s's ports can be reached", sp.Path, strings.SplitN(sp.Path, "/", 2)[0])
	}
	params := r.GetParams()
	sp.Host = stringParam(params["host"])
	if sp.Host == "" {
		sp.Host = strings.SplitN(sp.Path, "/", 2)[0] // labgrid's default: the exporter's name
	}
	sp.Port = int(intParam(params["port"]))
	if v := intParam(params["speed"]); v > 0 {
		sp.Speed = int(v)
	}
	if v := stringParam(params["protocol"]); v != "" {
		sp.Protocol = v
	}
	if sp.Protocol != "rfc2217" && sp.Protocol != "raw" {
		return sp, false, fmt.Errorf("labgrid resource %s: protocol %q (want rfc2217 or raw)", sp.Path, sp.Protocol)
	}
	return sp, sp.Port > 0 && sp.Port < 65536, nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "nothing"
	}
	return strings.Join(s, ", ")
}

func stringParam(v *lgpb.MapValue) string {
	if s, ok := v.GetKind().(*lgpb.MapValue_StringValue); ok {
		return s.StringValue
	}
	return ""
}

func intParam(v *lgpb.MapValue) int64 {
	switch k := v.GetKind().(type) {
	case *lgpb.MapValue_IntValue:
		return k.IntValue
	case *lgpb.MapValue_UintValue:
		return int64(min(k.UintValue, 1<<62))
	case *lgpb.MapValue_FloatValue:
		return int64(k.FloatValue)
	case *lgpb.MapValue_StringValue:
		n, _ := strconv.ParseInt(k.StringValue, 10, 64)
		return n
	}
	return 0
}

// Board is the console of an acquired place. Close closes the console and
// releases the place (unless it was acquired before we came).
type Board struct {
	Place string
	Port  SerialPort
	// Mine is set when this user held the place already: it stays
	// acquired after Close.
	Mine bool

	console net.Conn
	rw      interface {
		Read([]byte) (int, error)
		Write([]byte) (int, error)
	}
	c    *Client
	once sync.Once
	err  error
}

// Open acquires the target's place, finds its serial port and connects
// to it. step bounds each wait (the coordinator's answers, the port, the
// telnet negotiation). Whatever fails after the place was acquired
// releases it again, with a fresh context so that a cancelled ctx
// (Ctrl-C) still releases.
func Open(ctx context.Context, t Target, step time.Duration) (*Board, error) {
	if step <= 0 {
		step = DefaultNegotiationTimeout
	}
	sctx, cancel := context.WithTimeout(ctx, step)
	defer cancel()
	c, err := Dial(sctx, t.Coordinator, UserName())
	if err != nil {
		return nil, err
	}
	place, mine, err := c.Acquire(sctx, t.Place)
	if err != nil {
		if place != "" && !mine {
			var held *HeldError
			if !errors.As(err, &held) {
				_ = release(c, place) // an acquire may have gone through before it failed
			}
		}
		c.Close()
		return nil, err
	}
	b := &Board{Place: place, Mine: mine, c: c}
	if err := b.connect(ctx, step); err != nil {
		return nil, errors.Join(err, b.Close())
	}
	return b, nil
}

// connect finds the place's serial port and opens it.
func (b *Board) connect(ctx context.Context, step time.Duration) error {
	sctx, cancel := context.WithTimeout(ctx, step)
	defer cancel()
	sp, err := b.c.SerialPort(sctx, b.Place)
	if err != nil {
		return err
	}
	b.Port = sp
	var d net.Dialer
	conn, err := d.DialContext(sctx, "tcp", sp.Address())
	if err != nil {
		return fmt.Errorf("labgrid place %s: console %s at %s: %w", b.Place, sp.Path, sp.Address(), err)
	}
	b.console, b.rw = conn, conn
	if sp.Protocol == "rfc2217" {
		t, err := NewRFC2217(sctx, conn, sp.Speed, step)
		if err != nil {
			return fmt.Errorf("labgrid place %s: console %s at %s: %w", b.Place, sp.Path, sp.Address(), err)
		}
		b.rw = t
	}
	return nil
}

// Read reads from the board's console.
func (b *Board) Read(p []byte) (int, error) { return b.rw.Read(p) }

// Write writes to the board's console.
func (b *Board) Write(p []byte) (int, error) { return b.rw.Write(p) }

// Close closes the console, releases the place unless Mine, and leaves
// the coordinator. The release has its own ReleaseTimeout.
func (b *Board) Close() error {
	b.once.Do(func() {
		if b.console != nil {
			_ = b.console.Close()
		}
		if !b.Mine {
			b.err = release(b.c, b.Place)
		}
		_ = b.c.Close()
	})
	return b.err
}

func release(c *Client, place string) error {
	ctx, cancel := context.WithTimeout(context.Background(), ReleaseTimeout)
	defer cancel()
	return c.Release(ctx, place)
}
