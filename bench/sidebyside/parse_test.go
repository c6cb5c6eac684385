package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func closeTo(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(math.Abs(a), math.Abs(b)) }

// The testdata files are real outputs, recorded on loopback: wirebench
// client --json against a wirebench server, iperf 2.1.8 -y C from client
// and server, iperf3 3.12 -c -J.

func TestParseWirebenchUDP(t *testing.T) {
	c, err := parseWirebench(readTestdata(t, "wb-udp.json"), readTestdata(t, "wb-udp-server.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Sent from the client's document, received from the server's own
	// (its clock: 1.010586572 s, not the report's 1.010586).
	want := Counts{Sent: 48154, SentSeconds: 1.010588745, SentPPS: 49845.08537307781, Received: 48154, Lost: 0, Expected: 48154,
		RecvBytes: 3081856, RecvSeconds: 1.010586572, RecvBPS: 24396524.299921133}
	if c != want {
		t.Errorf("got %+v\nwant %+v", c, want)
	}
	if !closeTo(c.RecvPPS(), 48154/1.010586572) || c.Loss() != 0 {
		t.Errorf("rx pps %v, loss %v", c.RecvPPS(), c.Loss())
	}
}

func TestParseWirebenchTCP(t *testing.T) {
	c, err := parseWirebench(readTestdata(t, "wb-tcp-p2.json"), readTestdata(t, "wb-tcp-p2-server.json"))
	if err != nil {
		t.Fatal(err)
	}
	if c.RecvBytes != 2378036342 || c.RecvBPS != 17052722001.301538 || c.RecvSeconds != 1.115616072 {
		t.Errorf("got %+v, want the server's 2378036342 bytes at 17.05 Gbit/s over 1.115616072 s", c)
	}
}

func TestParseWirebenchErrors(t *testing.T) {
	server := string(readTestdata(t, "wb-udp-server.json"))
	client := string(readTestdata(t, "wb-udp.json"))
	for _, tc := range []struct{ client, server, want string }{
		{`not json`, server, "reading wirebench client --json"},
		{`{"schema":"other/1","role":"client"}`, server, "schema"},
		{`{"schema":"wirebench/1","role":"client","error":"connection refused"}`, server, "connection refused"},
		{client, ``, "reading wirebench server --json"},
		{client, client, "want the server's"},
		{client, `{"schema":"wirebench/1","role":"server"}`, "no receiver counts"},
		{client, `{"schema":"wirebench/1","role":"server","receiver":{"bytes":5,"source":"peer-report"}}`, "no receiver counts"},
	} {
		_, err := parseWirebench([]byte(tc.client), []byte(tc.server))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("client %.40q, server %.40q: err %v, want it to say %q", tc.client, tc.server, err, tc.want)
		}
	}
}

func TestParseIperf3UDP(t *testing.T) {
	c, err := parseIperf3(readTestdata(t, "iperf3-udp.json"), true)
	if err != nil {
		t.Fatal(err)
	}
	// The receiver's "packets" is what it expected: 110836, 35116 lost.
	if c.Sent != 110847 || c.Expected != 110836 || c.Lost != 35116 || c.Received != 110836-35116 || c.RecvBytes != 4846080 || c.RecvSeconds != 1.003894 {
		t.Errorf("got %+v", c)
	}
	if c.Received*64 != c.RecvBytes {
		t.Errorf("received %d datagrams of 64 bytes, but %d bytes", c.Received, c.RecvBytes)
	}
	if !closeTo(c.SentPPS, 110847/1.000012) || !closeTo(c.Loss(), 35116.0/110836) {
		t.Errorf("sent pps %v, loss %v", c.SentPPS, c.Loss())
	}
}

func TestParseIperf3TCP(t *testing.T) {
	c, err := parseIperf3(readTestdata(t, "iperf3-tcp-p2.json"), false)
	if err != nil {
		t.Fatal(err)
	}
	if c.RecvBytes != 49807360 || c.RecvBPS != 344614873.6771823 || c.Sent != 0 {
		t.Errorf("got %+v, want sum_received's 49807360 bytes at 344.6 Mbit/s", c)
	}
	if _, err := parseIperf3([]byte(`{"end":{},"error":"error - unable to connect to server"}`), false); err == nil || !strings.Contains(err.Error(), "unable to connect") {
		t.Errorf("iperf3's error: %v", err)
	}
	if _, err := parseIperf3([]byte(`{"end":{}}`), false); err == nil {
		t.Error("no sums accepted")
	}
}

func TestParseIperf2UDP(t *testing.T) {
	c, err := parseIperf2UDP(readTestdata(t, "iperf2-udp-client.csv"), readTestdata(t, "iperf2-udp-server.csv"), 64)
	if err != nil {
		t.Fatal(err)
	}
	// Client: 3122124 bytes at 24971822 bit/s; server: 3106828 bytes,
	// 239 lost of 48783.
	if c.Sent != 3122124/64 || !closeTo(c.SentSeconds, 3122124*8/24971822.0) {
		t.Errorf("sent %d over %v s", c.Sent, c.SentSeconds)
	}
	if c.Expected != 48783 || c.Lost != 239 || c.Received != 48783-239 || c.RecvBytes != 3106828 || c.RecvBPS != 24859546 {
		t.Errorf("got %+v", c)
	}
	// (iperf 2's byte count is 12 bytes off a whole number of datagrams.)
	if d := c.Received*64 - c.RecvBytes; d < -64 || d > 64 {
		t.Errorf("received %d datagrams of 64 bytes, but %d bytes", c.Received, c.RecvBytes)
	}
	// The client alone has no report (total -1): an error, not zeros.
	if _, err := parseIperf2UDP(readTestdata(t, "iperf2-udp-client.csv"), readTestdata(t, "iperf2-udp-client.csv"), 64); err == nil {
		t.Error("a client line taken for the server's report")
	}
}

func TestParseIperf2TCP(t *testing.T) {
	c, err := parseIperf2TCP(readTestdata(t, "iperf2-tcp-p2-server.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if c.RecvBytes != 823001148+590479420 || c.RecvBPS != 6543960147+4755205450 {
		t.Errorf("got %+v, want the two streams summed", c)
	}
	// A sum line (id -1) is not a third stream.
	withSum := append(readTestdata(t, "iperf2-tcp-p2-server.csv"), "19700101000000,127.0.0.1,0,127.0.0.1,35404,-1,0.0-1.0,1413480568,11299165597\n"...)
	if c2, err := parseIperf2TCP(withSum); err != nil || c2 != c {
		t.Errorf("with a sum line: got %+v, %v; want %+v", c2, err, c)
	}
}

func TestParseIperf2CSVErrors(t *testing.T) {
	for _, in := range []string{"", "iperf: connect failed: Connection refused\n", "1,2,3\n", "t,a,1,b,2,1,0.0-1.0,x,5\n"} {
		if _, err := parseIperf2CSV([]byte(in)); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}
