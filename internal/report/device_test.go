package report

import (
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
)

func TestWriteDevice(t *testing.T) {
	bps, pk, lost := 79.81e6, int64(99778), int64(3)
	r := result.New("server")
	r.Test.Protocol = result.UDP
	r.Receiver = &result.Receiver{BitsPerSecond: 80e6, Packets: 99780, Lost: 1}
	r.Device = &result.Device{Shell: "zephyr", Role: "client", BitsPerSecond: &bps, Packets: &pk, Lost: &lost}
	var b strings.Builder
	if err := WriteDevice(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"[dut] zephyr    (client) reported 79.8 Mbits/sec, 99778 packets, 3 lost\n",
		"[dut] wirebench  (receiver) 80.0 Mbits/sec, 99780 packets, 1 lost\n",
		"(-0.2%), packets -2, lost +2\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "jitter") || strings.Contains(b.String(), "out of order") {
		t.Errorf("figures the device did not print appear:\n%s", b.String())
	}

	r.Device = &result.Device{Shell: "esp-idf", Role: "server", Error: "the device reset"}
	b.Reset()
	_ = WriteDevice(&b, r)
	if got := b.String(); got != "[dut] esp-idf (server): no figures: the device reset\n" {
		t.Errorf("got %q", got)
	}
	r.Device = nil
	b.Reset()
	if _ = WriteDevice(&b, r); b.Len() != 0 {
		t.Errorf("printed %q without a device", b.String())
	}
}
