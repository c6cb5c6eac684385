package calc

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/linerate"
)

func TestParseSizes(t *testing.T) {
	tests := []struct {
		spec string
		step int
		want []int
	}{
		{"1470", 0, []int{1470}},
		{" 64 , 128,1470", 0, []int{64, 128, 1470}},
		{"64-1518", 256, []int{64, 320, 576, 832, 1088, 1344, 1518}},
		{"0-32", 0, []int{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32}},
		{"5-5", 0, []int{5}},
		// Near the largest int of the platform (32 or 64 bits): no overflow.
		{strconv.Itoa(math.MaxInt-7) + "-" + strconv.Itoa(math.MaxInt), 100, []int{math.MaxInt - 7, math.MaxInt}},
	}
	for _, tt := range tests {
		got, err := ParseSizes(tt.spec, tt.step)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParseSizes(%q, %d) = %v, %v; want %v", tt.spec, tt.step, got, err, tt.want)
		}
	}
}

func TestParseSizesBad(t *testing.T) {
	tests := []struct {
		spec string
		step int
		want string
	}{
		{"64", -1, "invalid --step"},
		{"64,x", 0, "invalid size"},
		{"-1", 0, "invalid range"},
		{"1518-64", 0, "invalid range"},
		{"0-65000", 1, "more than 10000 rows"},
		{strings.Repeat("1,", MaxRows) + "1", 0, "more than 10000 sizes"},
	}
	for _, tt := range tests {
		if _, err := ParseSizes(tt.spec, tt.step); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseSizes(%.20q, %d): error %v, want one with %q", tt.spec, tt.step, err, tt.want)
		}
	}
}

func mustMedium(t *testing.T, name string) linerate.Medium {
	t.Helper()
	m, err := linerate.LookupMedium(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Fast Ethernet carries 1470-byte UDP payloads at 95.70 Mbit/s: 1470 bytes
// of 1538 on the wire (preamble, header, FCS, gap), 8,138.02 frames/s.
func TestBuildUDP(t *testing.T) {
	s := linerate.Stack{Transport: linerate.UDP, MTU: 1500}
	d, err := Build(Plan{Media: []linerate.Medium{mustMedium(t, "eth100")}, Stack: s, Payloads: []int{1470}, Sizes: []int{1470}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Schema != "wirebench/1" || d.Kind != Kind || d.Stack.IP != "ipv4" || d.Stack.Protocol != "udp" || d.Stack.MTU != 1500 || d.Stack.TCPTimestamps {
		t.Errorf("head %+v", d)
	}
	if len(d.Media) != 1 || d.Media[0].BitRateBPS != 100e6 || d.Media[0].BusCeilingBPS != 0 {
		t.Errorf("media %+v", d.Media)
	}
	if len(d.Results) != 1 {
		t.Fatalf("%d results", len(d.Results))
	}
	r := d.Results[0]
	if r.GoodputBPS != 95703125 || r.Size != 1470 || r.Echo != nil || int(r.FramesPerSecond*100) != 813802 {
		t.Errorf("result %+v", r)
	}
}

// An echo of 65500 bytes on Fast Ethernet is 45 IPv4 fragments: 65508 bytes
// of IP data plus 45 × 58 bytes on the wire (46 when the gap is forgotten).
func TestBuildEcho(t *testing.T) {
	s := linerate.Stack{Transport: linerate.ICMP, MTU: 1500}
	d, err := Build(Plan{Media: []linerate.Medium{mustMedium(t, "eth100")}, Stack: s, Payloads: []int{65500}, Sizes: []int{65500}, RTT: 13 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	e := d.Results[0].Echo
	if e == nil || e.NoGapBytes != 67578 || e.WireBytes != 68118 || e.NoGapOverhead != 46 || e.WireOverhead != 58 || e.RTTS != 0.013 {
		t.Fatalf("echo %+v", e)
	}
	if want := 68118 * 8 / 0.0065; e.ImpliedBPS != want || e.ImpliedShareOfMedium != want/100e6 {
		t.Errorf("implied %v (%v of the medium), want %v", e.ImpliedBPS, e.ImpliedShareOfMedium, want)
	}
}

// Every payload on every medium, media in order, sizes as typed; the JSON
// carries the bus ceiling only for USB.
func TestBuildCompare(t *testing.T) {
	eem, err := mustMedium(t, "usb2-eem").WithAggregate(2)
	if err != nil {
		t.Fatal(err)
	}
	s := linerate.Stack{Transport: linerate.Raw, MTU: 1500}
	d, err := Build(Plan{Media: []linerate.Medium{mustMedium(t, "eth100"), eem}, Stack: s, Payloads: []int{46, 1500}, Sizes: []int{64, 1518}})
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	var media []string
	for _, r := range d.Results {
		sizes, media = append(sizes, r.Size), append(media, r.Medium)
	}
	if !slices.Equal(sizes, []int{64, 1518, 64, 1518}) || !slices.Equal(media, []string{"eth100", "eth100", "usb2-eem", "usb2-eem"}) {
		t.Errorf("sizes %v, media %v", sizes, media)
	}
	if d.Stack.IP != "" || d.Media[1].Aggregate != 2 || d.Media[1].BusCeilingBPS != 425.984e6 || d.Media[1].Class == "" {
		t.Errorf("stack %+v, media %+v", d.Stack, d.Media)
	}
	b, err := json.Marshal(d.Media)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "bus_ceiling_bps"); n != 1 {
		t.Errorf("bus_ceiling_bps %d times in %s", n, b)
	}
}

func TestBuildTooLarge(t *testing.T) {
	s := linerate.Stack{Transport: linerate.UDP, MTU: 1500}
	if _, err := Build(Plan{Media: []linerate.Medium{mustMedium(t, "eth100")}, Stack: s, Payloads: []int{70000}, Sizes: []int{70000}}); err == nil {
		t.Error("a UDP payload of 70000 bytes worked out")
	}
}
