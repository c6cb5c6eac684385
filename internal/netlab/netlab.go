package netlab

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ErrNotSupported is returned on systems without Linux network namespaces.
var ErrNotSupported = errors.New("netlab: network namespaces are only supported on linux")

// Prefix starts the name of every namespace this package creates. The full
// name is "wbl-<pid>-<start>-<rand>[-<label>]-a|b|r": the creating process's
// PID and its start time (clock ticks since boot, from /proc/<pid>/stat)
// let CleanupStale tell a crashed run's namespaces from a live one's even
// after the PID has been reused.
const Prefix = "wbl-"

// Wire constants of the shaping recipe (see the package documentation).
const (
	// EthernetHeader is the MAC header already counted in every skb length.
	EthernetHeader = 14
	// EthernetOverhead is what the wire adds per frame and the skb does not
	// carry: preamble+SFD 8, FCS 4, inter-frame gap 12. It is the size
	// table's "overhead".
	EthernetOverhead = 24
	// DefaultMTU is the veth MTU when Config.MTU is zero.
	DefaultMTU = 1500
	// DefaultLatency is tbf's latency (its queue length expressed in time)
	// when Config.Latency is zero.
	DefaultLatency = 20 * time.Millisecond
)

// Addresses used inside a lab. IPv4 addresses come from Config.Net
// (default 198.18.0.0/24, inside the RFC 2544 benchmarking block
// 198.18.0.0/15): A is .1 and B .2 of it. IPv6 ones come from the RFC 5180
// block 2001:2::/48. Every lab may use the same ones, which is safe because
// each lab's namespaces see only their own veth pairs. No default route is
// installed: the only reachable destination from a host is the other host.
//
// With a router (Config.Router) there are two point-to-point links, A–R and
// R–B, each a /31 (RFC 3021) or /127 (RFC 6164), so that A and B keep the
// addresses they have in the two-host lab and R takes the other address of
// each link (the network's .0 and .3). A and B each have one route, to the
// other link via R; there is still no default route anywhere.
var (
	addr6A     = netip.MustParsePrefix("2001:2::1/64")
	addr6B     = netip.MustParsePrefix("2001:2::2/64")
	rtrAddr6A  = netip.MustParsePrefix("2001:2::1/127")
	rtrAddr6RA = netip.MustParsePrefix("2001:2::/127")
	rtrAddr6B  = netip.MustParsePrefix("2001:2::2/127")
	rtrAddr6RB = netip.MustParsePrefix("2001:2::3/127")
)

// Config describes a lab. The zero value is an unshaped IPv4 lab with
// MTU 1500.
type Config struct {
	// Name is an optional label (up to 16 letters, digits or '_') added to
	// the namespace names so that `ip netns list` shows which test made them.
	Name string
	// RateBPS is the emulated Ethernet wire rate in bit/s; 0 leaves the
	// link unshaped (veth speed, i.e. memory speed).
	RateBPS uint64
	// Burst is tbf's bucket size in bytes; 0 picks the larger of two
	// full-size frames and 1 ms at RateBPS (12500 bytes at 100 Mbit/s).
	// One frame (MTU+38) is exact after idle but loses rate where timers
	// fire late; see the package documentation.
	Burst int
	// Latency is how long a frame may wait in tbf's queue before it is
	// dropped (this fixes the queue's length); 0 means DefaultLatency.
	Latency time.Duration
	// MTU of both veth ends; 0 means DefaultMTU. At most 65535.
	MTU int
	// IPv6 also gives each host an address from 2001:2::/64 (Host.Addr6),
	// configured without duplicate address detection so that it is usable
	// as soon as New returns.
	IPv6 bool
	// ShapeBothWays shapes B→A as well as A→B. Without it only A's egress is
	// shaped and B→A (e.g. TCP's ACKs) runs at veth speed.
	ShapeBothWays bool
	// Router puts a third namespace, R, between A and B: A ═ R ═ B, with
	// IP forwarding on in R only. The shaper then sits on R's egress
	// towards B (and, with ShapeBothWays, towards A) instead of on A's own
	// egress, like the bottleneck of a real path. A TCP sender in A then
	// gets no backpressure from a local qdisc (TCP Small Queues) and fills
	// the shaper's queue, which is what latency-under-load tests need.
	// A and B keep their addresses (198.18.0.1 and .2); see Lab.R.
	Router bool
	// RelayOnly (with Router) leaves IP forwarding off in R and gives A and
	// B no route to each other: each reaches only R's address on its own
	// link, so the only way between them is a user-space relay running in
	// R (`wirebench lab up --model`). A packet addressed to the far host
	// then fails at once ("network unreachable") instead of silently
	// bypassing the relay.
	RelayOnly bool
	// Net is the IPv4 network the lab's addresses come from: A is its
	// first address after the network address and B its second (R, with a
	// router, takes the network address and the third). It must lie inside
	// 198.18.0.0/15 and be at most a /30; the zero value means
	// DefaultNet, 198.18.0.0/24.
	Net netip.Prefix
	// Lab, when set, makes a named, persistent lab (`wirebench lab`): its
	// namespaces are called wbl-lab-<Lab>-a|b|r (LabNamespace), they
	// outlive the creating process once Lab.Release is called, and
	// CleanupStale never touches them (RemoveLab does). Up to 16 lower-case
	// letters, digits or '_'. Name must then be empty.
	Lab string

	// Wire chooses how a shaped lab emulates the wire: WireFilled (the
	// zero value) shapes with a token bucket whose idle time filler frames
	// use up, WireTBF with the bucket alone, WireExact with a
	// departure-time forwarder in R (package edtwire, implies Router); see
	// the package documentation.
	Wire Wire

	// hook, when set (by tests only), is called after each creation step and
	// can fail it, to check that New cleans up after a failure midway.
	hook func(step string) error
}

// Wire is a way of emulating the Ethernet wire (Config.Wire).
type Wire int

const (
	// WireFilled shapes with a token bucket (HTB) on the sending veth end
	// (R's with a router) and keeps the bucket empty while the wire is
	// idle by sending filler frames, which the far end drops, in a class
	// of lowest priority: exact rates on a busy machine, as WireTBF, and a
	// burst after idle leaves at the wire's rate, as on a real wire.
	WireFilled Wire = iota
	// WireTBF shapes with tbf on the sending veth end: exact rates on a
	// busy machine, but a burst after idle leaves up to one bucket at veth
	// speed.
	WireTBF
	// WireExact forwards through a user-space departure-time wire in R
	// (IP forwarding off there): every frame leaves no earlier than its
	// serialization time on an absolute schedule.
	WireExact
)

// String returns "filled", "tbf" or "exact".
func (w Wire) String() string {
	switch w {
	case WireFilled:
		return "filled"
	case WireTBF:
		return "tbf"
	case WireExact:
		return "exact"
	}
	return "wire(" + strconv.Itoa(int(w)) + ")"
}

// ParseWire parses "filled", "tbf" or "exact" ("" is the default,
// filled).
func ParseWire(s string) (Wire, error) {
	switch s {
	case "filled", "":
		return WireFilled, nil
	case "tbf":
		return WireTBF, nil
	case "exact":
		return WireExact, nil
	}
	return 0, fmt.Errorf("netlab: wire %q: want filled, tbf or exact", s)
}

var (
	labelRE    = regexp.MustCompile(`^[A-Za-z0-9_]{0,16}$`)
	labNameRE  = regexp.MustCompile(`^[a-z0-9_]{1,16}$`)
	benchBlock = netip.MustParsePrefix("198.18.0.0/15")
)

// DefaultNet is the lab network when Config.Net is the zero value.
var DefaultNet = netip.MustParsePrefix("198.18.0.0/24")

// LabPrefix starts the namespace names of named labs (Config.Lab). Such
// names never parse as a test lab's (see Prefix), so CleanupStale leaves
// them alone.
const LabPrefix = Prefix + "lab-"

// LabNamespace returns the name of namespace end ("a", "b" or "r") of the
// named lab lab: wbl-lab-<lab>-<end>.
func LabNamespace(lab, end string) string { return LabPrefix + lab + "-" + end }

// ValidateLabName reports whether lab can name a persistent lab.
func ValidateLabName(lab string) error {
	if !labNameRE.MatchString(lab) {
		return fmt.Errorf("netlab: lab name %q: want 1 to 16 lower-case letters, digits or '_'", lab)
	}
	return nil
}

// ValidateNet reports whether p can be a lab's network: an IPv4 network
// (host bits zero) inside 198.18.0.0/15, at most a /30 so that it holds
// the network address and three more.
func ValidateNet(p netip.Prefix) error {
	switch {
	case !p.IsValid() || !p.Addr().Is4():
		return fmt.Errorf("netlab: network %v: want an IPv4 network like 198.18.0.0/24", p)
	case p.Bits() < benchBlock.Bits() || !benchBlock.Contains(p.Addr()):
		return fmt.Errorf("netlab: network %v: must lie inside the benchmarking block %v (RFC 2544)", p, benchBlock)
	case p.Bits() > 30:
		return fmt.Errorf("netlab: network %v: too small, want at most a /30", p)
	case p.Masked() != p:
		return fmt.Errorf("netlab: network %v: host bits set, did you mean %v?", p, p.Masked())
	}
	return nil
}

// net returns the lab's IPv4 network.
func (c Config) net() netip.Prefix {
	if c.Net.IsValid() {
		return c.Net
	}
	return DefaultNet
}

// hostAddr returns address i of the lab's network (0 is the network
// address) with the given prefix length.
func (c Config) hostAddr(i, bits int) netip.Prefix {
	a := c.net().Addr().As4()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v += uint32(i)
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), bits)
}

// Validate reports the first invalid field of c.
func (c Config) Validate() error {
	switch {
	case !labelRE.MatchString(c.Name):
		return fmt.Errorf("netlab: name %q: want up to 16 letters, digits or '_'", c.Name)
	case c.Lab != "" && c.Name != "":
		return errors.New("netlab: set Name or Lab, not both")
	case c.RelayOnly && !c.Router:
		return errors.New("netlab: RelayOnly needs Router")
	case c.Wire != WireFilled && c.Wire != WireTBF && c.Wire != WireExact:
		return fmt.Errorf("netlab: unknown wire %d", c.Wire)
	case c.Wire == WireExact && (c.RateBPS == 0 || c.RelayOnly):
		return errors.New("netlab: the exact wire needs a rate and forwards itself (no RelayOnly)")
	case c.Lab != "" && ValidateLabName(c.Lab) != nil:
		return ValidateLabName(c.Lab)
	case c.Net.IsValid() && ValidateNet(c.Net) != nil:
		return ValidateNet(c.Net)
	case c.MTU != 0 && (c.MTU < 68 || c.MTU > 65535):
		return fmt.Errorf("netlab: mtu %d: want 68..65535", c.MTU)
	case c.Burst < 0:
		return fmt.Errorf("netlab: burst %d: must not be negative", c.Burst)
	case c.Latency < 0:
		return fmt.Errorf("netlab: latency %v: must not be negative", c.Latency)
	case c.RateBPS != 0 && c.Burst != 0 && c.Burst < c.mtu()+EthernetHeader+EthernetOverhead:
		return fmt.Errorf("netlab: burst %d: smaller than one full frame (%d bytes)",
			c.Burst, c.mtu()+EthernetHeader+EthernetOverhead)
	}
	return nil
}

func (c Config) mtu() int {
	if c.MTU == 0 {
		return DefaultMTU
	}
	return c.MTU
}

func (c Config) latency() time.Duration {
	if c.Latency == 0 {
		return DefaultLatency
	}
	return c.Latency
}

// burst returns the tbf bucket size in bytes: Burst, or at least two
// full-size frames (tbf must be able to pass one whole frame, and the size
// table makes a frame count MTU+14+24 bytes) and 1 ms worth of the rate.
// The bucket is what absorbs late dequeues: tbf sends from a timer, and
// each time that timer or the softirq after it runs late by more than
// (bucket - frame)/rate, wire time is lost for good. With a 3 kB bucket
// (about 130 µs of slack at 100 Mbit/s) a loaded 2-core machine measured
// 2-4 % below the wire rate; 1 ms of slack brought it back within 0.3 %.
// Over a sustained run the bucket adds at most its own size once (at the
// start, when it is full), which tests skip as warm-up.
func (c Config) burst() int {
	if c.Burst != 0 {
		return c.Burst
	}
	b := 2 * (c.mtu() + EthernetHeader + EthernetOverhead)
	if r := int(c.RateBPS / 8 / 1000); r > b {
		b = r
	}
	return b
}

// PeakFactor is how many times the wire rate tbf's peak rate is. The peak
// rate is only there to give tbf a one-frame "mtu" (see tcQdiscArgs); at
// 100 times the rate its one-frame bucket refills within a fraction of a
// frame's wire time, so it never holds a frame back that the main bucket
// would pass.
const PeakFactor = 100

// tcCommands returns the `tc` commands (their arguments) that install the
// wire's shaper on ifname in namespace ns: one for WireTBF, the HTB tree
// for WireFilled (see tcFilledCommands).
func (c Config) tcCommands(ns, ifname string) [][]string {
	if c.Wire == WireFilled {
		return c.tcFilledCommands(ns, ifname)
	}
	return [][]string{c.tcQdiscArgs(ns, ifname)}
}

// tcQdiscArgs returns the arguments of `tc` that install the shaping qdisc
// of WireTBF on ifname in namespace ns:
//
//	tbf rate R burst B latency L peakrate 100R mtu MTU+14 overhead 24
//
// "mtu" makes tbf's max_size one frame, so tbf_enqueue segments every GSO
// skb (UDP GSO from any program, TCP TSO) into single frames before they
// are queued; "overhead 24" is the rate's own per-packet overhead, which
// tbf adds to every skb it dequeues, so each of those frames is charged
// its 24 bytes. A size table (stab) would not do: tbf_segment resets each
// segment's length to its skb length, which drops the stab's overhead
// (measured: 1512 of 1536 bytes charged per 1470-byte datagram).
func (c Config) tcQdiscArgs(ns, ifname string) []string {
	return []string{
		"-n", ns, "qdisc", "replace", "dev", ifname, "root",
		"tbf", "rate", bits(c.RateBPS),
		"burst", strconv.Itoa(c.burst()),
		"latency", strconv.FormatInt(c.latency().Microseconds(), 10) + "us",
		"peakrate", bits(PeakFactor * c.RateBPS),
		"mtu", strconv.Itoa(c.mtu() + EthernetHeader),
		"overhead", strconv.Itoa(EthernetOverhead),
	}
}

// HTB classes of WireFilled: the wire (parent of both), the lab's traffic
// (every skb HTB does not otherwise classify) and the filler (skbs whose
// priority, SO_PRIORITY, names it).
const (
	fillWireClass    = "1:1"
	fillTrafficClass = "1:10"
	fillFillerClass  = "1:20"
	// FillerPriority is the skb priority (major 1, minor 0x20) that puts a
	// filler frame into the filler class.
	FillerPriority = 0x10020
)

// tcFilledCommands returns the `tc` commands of WireFilled on ifname in
// namespace ns:
//
//	qdisc replace root handle 1: htb default 10
//	class 1:1  htb rate R ceil R burst B cburst B overhead 24 quantum F      the wire
//	class 1:10 htb rate 8bit ceil R burst F cburst B overhead 24 prio 0 …    the lab's traffic
//	class 1:20 htb rate 8bit ceil R burst F cburst B overhead 24 prio 7 …    the filler
//	qdisc 10: tbf rate 1Tbit burst 64KiB limit Q peakrate 10Tbit mtu F   (splits GSO skbs)
//	qdisc 20: pfifo limit 64
//
// (F = MTU+14, one full frame as the qdisc counts it; Q = what the wire
// sends in the queue's latency, plus the bucket.) Both children have next
// to no rate of their own, so every frame borrows from the wire's bucket,
// and the lab's traffic at priority 0 goes before any filler frame. The
// wire's bucket (B, 1 ms by default) absorbs late timers exactly as tbf's
// does; the filler spends it whenever the lab's traffic leaves it unused,
// so that a burst after idle finds it empty and leaves at the wire's rate.
// The traffic's leaf is a tbf there only for its GSO segmentation (see
// tcQdiscArgs): HTB charges each frame it hands out, with the overhead, as
// the wire's rate table says. Its rates are so high that it never holds a
// frame back: a leaf that does (tbf's one-frame peak bucket at 100 times a
// 100 Mbit/s wire did, for two frames dequeued within 1.2 µs) makes HTB
// pass the turn to the filler, which then took up to 14 % of a TCP flow's
// wire time on a loaded machine ("htb: tbf qdisc 10: is
// non-work-conserving?" in the kernel log).
func (c Config) tcFilledCommands(ns, ifname string) [][]string {
	frame := strconv.Itoa(c.mtu() + EthernetHeader)
	b := strconv.Itoa(c.burst())
	rate := bits(c.RateBPS)
	over := strconv.Itoa(EthernetOverhead)
	dev := []string{"-n", ns}
	class := func(id, parent string, extra ...string) []string {
		a := append(append([]string{}, dev...), "class", "add", "dev", ifname, "parent", parent, "classid", id, "htb")
		return append(a, extra...)
	}
	queue := uint64(c.latency().Seconds()*float64(c.RateBPS)/8) + uint64(c.burst())
	return [][]string{
		append(append([]string{}, dev...), "qdisc", "replace", "dev", ifname, "root", "handle", "1:", "htb", "default", "10"),
		class(fillWireClass, "1:", "rate", rate, "ceil", rate, "burst", b, "cburst", b, "overhead", over, "quantum", frame),
		class(fillTrafficClass, fillWireClass, "rate", "8bit", "ceil", rate, "burst", frame, "cburst", b, "overhead", over, "prio", "0", "quantum", frame),
		class(fillFillerClass, fillWireClass, "rate", "8bit", "ceil", rate, "burst", frame, "cburst", b, "overhead", over, "prio", "7", "quantum", frame),
		append(append([]string{}, dev...), "qdisc", "add", "dev", ifname, "parent", fillTrafficClass, "handle", "10:",
			"tbf", "rate", bits(segmenterRate), "burst", strconv.Itoa(64<<10),
			"limit", strconv.FormatUint(queue, 10), "peakrate", bits(10*segmenterRate), "mtu", frame),
		append(append([]string{}, dev...), "qdisc", "add", "dev", ifname, "parent", fillFillerClass, "handle", "20:", "pfifo", "limit", "64"),
	}
}

// segmenterRate is the rate of WireFilled's segmenting leaf, bit/s: a
// 1514-byte frame costs it 12 ns, and 1.2 ns at its peak rate.
const segmenterRate = 1e12

// bits spells a rate in bit/s for tc.
func bits(bps uint64) string { return strconv.FormatUint(bps, 10) + "bit" }

// FillFrame is the length (Ethernet header included, no FCS) of the
// filler frames of a wire of rateBPS and the given MTU: about 100 µs of
// wire time, so that a frame that finds the wire idle waits at most that
// long behind one, and between 60 bytes and a full frame.
func FillFrame(rateBPS uint64, mtu int) int {
	n := int(float64(rateBPS)*100e-6/8) - EthernetOverhead
	return min(max(n, 60), mtu+EthernetHeader)
}

// WireGoodput returns the goodput in bit/s that a shaped lab link of
// rateBPS gives a flow carrying payload bytes per frame behind headers
// bytes of IP/transport headers: rate × payload / (payload + headers + 14 +
// 24). For UDP over IPv4 headers is 28 (1470-byte payloads at 100 Mbit/s:
// 95.70 Mbit/s); for TCP over IPv4 with timestamps it is 52 and the payload
// is the MSS, 1448 at MTU 1500 (94.15 Mbit/s).
func WireGoodput(rateBPS uint64, payload, headers int) float64 {
	frame := payload + headers + EthernetHeader + EthernetOverhead
	return float64(rateBPS) * float64(payload) / float64(frame)
}

// Lab is a pair of network namespaces joined by a veth pair (or, with
// Config.Router, by a router namespace and two veth pairs). Its methods are
// safe for concurrent use once New has returned; Close must be called once
// the lab is no longer needed (it is idempotent).
type Lab struct {
	// A and B are the two ends. A→B is the shaped direction.
	A, B *Host
	// R is the router between A and B when Config.Router is set, else nil.
	// Its Ifname and Addr are those of its side towards B (wbl-rb,
	// 198.18.0.3), whose egress carries the shaped A→B direction; its side
	// towards A is wbl-ra, 198.18.0.0.
	R *Host
	// Config is the effective configuration (defaults filled in).
	Config Config

	sys labSys
}

// Host is one end of a lab (or its router): a network namespace holding a
// veth end.
type Host struct {
	// Name is the namespace name, as `ip netns list` shows it.
	Name string
	// Addr is the host's IPv4 address (198.18.0.1 for A, .2 for B, /24;
	// with Config.Router the same in /31s, and .3 for R).
	Addr netip.Addr
	// Addr6 is the host's IPv6 address (2001:2::1 / ::2, and ::3 for R)
	// when Config.IPv6 is set, else the zero Addr.
	Addr6 netip.Addr
	// Ifname is the name of the host's veth end inside its namespace.
	Ifname string
	// Shaped reports whether the host's egress is shaped (with
	// Config.Router only R's is).
	Shaped bool

	sys hostSys
}

// Command returns a command that runs name with args inside the host's
// namespace (`ip netns exec NS name args…`), killed when ctx is done.
func (h *Host) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", h.Name, name}, args...)...)
}

// nsName builds a namespace name from its parts; see Prefix.
func nsName(pid int, start uint64, rand, label, end string) string {
	s := Prefix + strconv.Itoa(pid) + "-" + strconv.FormatUint(start, 10) + "-" + rand
	if label != "" {
		s += "-" + label
	}
	return s + "-" + end
}

// parseNSName extracts the creator's PID and start time from a namespace
// name made by nsName. ok is false for names this package did not make.
func parseNSName(name string) (pid int, start uint64, ok bool) {
	rest, found := strings.CutPrefix(name, Prefix)
	if !found {
		return 0, 0, false
	}
	parts := strings.Split(rest, "-")
	if len(parts) < 4 {
		return 0, 0, false
	}
	pid, err := strconv.Atoi(parts[0])
	if err != nil || pid <= 0 {
		return 0, 0, false
	}
	start, err = strconv.ParseUint(parts[1], 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return pid, start, true
}

// NSLink is one network interface in a namespace, as Inspect reports it.
type NSLink struct {
	Name  string   `json:"name"`
	Up    bool     `json:"up"`
	MTU   int      `json:"mtu"`
	Addrs []string `json:"addrs,omitempty"`
	// Qdisc is the root qdisc's kind ("tbf", "noqueue", …).
	Qdisc string `json:"qdisc,omitempty"`
	// RateBPS is the tbf rate in bit/s when Qdisc is "tbf".
	RateBPS uint64 `json:"rate_bps,omitempty"`
	// Drops is how many packets the root qdisc has dropped (the shaper's
	// queue was full); absent when none.
	Drops uint64 `json:"qdisc_drops,omitempty"`
}

// NSInfo is what exists in one namespace: its links and the processes in it.
type NSInfo struct {
	Name  string   `json:"name"`
	Links []NSLink `json:"links"`
	// Routes are the destinations routed beyond the directly connected
	// networks (there is never a default route).
	Routes []string `json:"routes,omitempty"`
	PIDs   []int    `json:"pids,omitempty"`
	// Unmounted says the namespace's file in /run/netns exists but holds no
	// namespace: a run was killed between creating the file and mounting
	// the new namespace on it. Nothing else exists of it; `lab up` and
	// `lab down` remove the file.
	Unmounted bool `json:"unmounted,omitempty"`
}
