package iperf2

import (
	"bytes"
	"encoding/binary"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testutil/resultcheck"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/testutil/loopback"
	"github.com/wirebench/wirebench/internal/testutil/standin"
	"github.com/wirebench/wirebench/internal/units"
)

// Stand-in peers for the dialects that cannot be installed (2.0.5, zperf,
// lwiperf, ESP-IDF) against wirebench, both roles: each must be answered in
// its own layout with exact counts (issue 2, "Must show").

// standinRate keeps the stand-in UDP clients well below what loopback and
// our 4 MiB receive buffer take, so no datagram is lost by the host.
const standinRate = 40e6

// distinct returns how many different ids ids holds.
func distinct(ids []int64) int64 {
	s := slices.Clone(ids)
	slices.Sort(s)
	return int64(len(slices.Compact(s)))
}

// checkUDPServerCounts checks our server's result against what a stand-in
// client with a FIN sent: firstID is the dialect's first id, so Total is
// |FIN id| and every distinct id (the FIN included) counts once.
func checkUDPServerCounts(t *testing.T, r *result.Result, c standin.UDPClientResult, wantDialect string) {
	t.Helper()
	if r.Test.Protocol != result.UDP || r.Test.Dialect != wantDialect {
		t.Errorf("test = %s/%s, want udp/%s", r.Test.Protocol, r.Test.Dialect, wantDialect)
	}
	if r.Error != "" {
		t.Errorf("result error: %s", r.Error)
	}
	rv := receiverOf(t, r)
	fin := int64(-c.FINID)
	wantPackets := distinct(c.IDsSent) + 1
	wantBytes := distinct(c.IDsSent)*int64(len(c.FirstDatagram)) + int64(len(c.FINDatagram))
	if rv.Total != fin || rv.Packets != wantPackets || rv.Bytes != wantBytes {
		t.Errorf("receiver total/packets/bytes = %d/%d/%d, want %d/%d/%d (stand-in sent %d data datagrams, FIN %d)",
			rv.Total, rv.Packets, rv.Bytes, fin, wantPackets, wantBytes, c.DataPackets, c.FINID)
	}
	if rv.Lost != int64(len(c.Injected.Dropped)) || rv.OutOfOrder != int64(len(c.Injected.Swapped)) ||
		dupsOf(rv) != int64(len(c.Injected.Repeated)) {
		t.Errorf("receiver lost/ooo/dup = %d/%d/%d, want %d/%d/%d (injected %+v)", rv.Lost, rv.OutOfOrder, dupsOf(rv),
			len(c.Injected.Dropped), len(c.Injected.Swapped), len(c.Injected.Repeated), c.Injected)
	}
}

// checkStandinReport checks the report as the stand-in client parsed it.
func checkStandinReport(t *testing.T, c standin.UDPClientResult, rv *result.Receiver) {
	t.Helper()
	if c.Report == nil || !c.ReportAccepted {
		t.Fatalf("%s client did not accept our report: %s (replies %d)", c.Dialect, c.ReportNote, len(c.Replies))
	}
	if c.ReportNote != "" {
		t.Errorf("%s client noted: %s", c.Dialect, c.ReportNote)
	}
	rep := c.Report
	if int64(rep.Datagrams) != rv.Total || int64(rep.ErrorCnt) != rv.Lost || int64(rep.OutOrderCnt) != rv.OutOfOrder ||
		int64(rep.TotalLen()) != rv.Bytes {
		t.Errorf("%s parsed total/lost/ooo/bytes = %d/%d/%d/%d, our result says %d/%d/%d/%d", c.Dialect,
			rep.Datagrams, rep.ErrorCnt, rep.OutOrderCnt, rep.TotalLen(), rv.Total, rv.Lost, rv.OutOfOrder, rv.Bytes)
	}
}

// checkReplyLayout checks the raw reply: flags 0x80000000-ish at off and
// the FIN's datagram header echoed or zeroed before it.
func checkReplyLayout(t *testing.T, c standin.UDPClientResult, off, minLen int, wantFlags uint32) {
	t.Helper()
	if len(c.Replies) == 0 {
		t.Fatalf("%s client got no reply", c.Dialect)
	}
	b := c.Replies[0]
	if len(b) < minLen {
		t.Fatalf("%s reply is %d bytes, want >= %d", c.Dialect, len(b), minLen)
	}
	if f := binary.BigEndian.Uint32(b[off:]); f&wantFlags != wantFlags {
		t.Errorf("%s reply flags at %d = %08x, want %08x set", c.Dialect, off, f, wantFlags)
	}
	if off == 12 && !bytes.Equal(b[:4], c.FINDatagram[:4]) {
		t.Errorf("%s legacy reply does not echo the FIN id: % x vs % x", c.Dialect, b[:4], c.FINDatagram[:4])
	}
}

func TestStandinUDPClientsToServer(t *testing.T) {
	ts := startServer(t, session.ServerConfig{IdleTimeout: 500 * time.Millisecond})
	opts := standin.UDPClientOptions{Count: 300, RateBps: standinRate}

	t.Run("iperf-2.0.5", func(t *testing.T) {
		c, err := standin.Legacy205UDPClient(deadlineCtx(t), ts.addr, opts)
		if err != nil {
			t.Fatal(err)
		}
		r := ts.resultFrom(c.Local.String())
		checkUDPServerCounts(t, r, c, session.DialectIperf2Legacy)
		if c.FINID != -300 {
			t.Errorf("2.0.5 FIN id %d, want -300", c.FINID)
		}
		checkReplyLayout(t, c, 12, 52, 0x80000000)
		if f := binary.BigEndian.Uint32(c.Replies[0][12:]); f != 0x80000000 {
			t.Errorf("legacy report flags %08x, want exactly 80000000", f)
		}
		checkStandinReport(t, c, r.Receiver)
		if c.Report.Datagrams != 300 || c.Report.ErrorCnt != 0 {
			t.Errorf("2.0.5 client prints %d/%d, want 0/300", c.Report.ErrorCnt, c.Report.Datagrams)
		}
	})
	t.Run("zperf-old", func(t *testing.T) {
		c, err := standin.ZperfOldUDPClient(deadlineCtx(t), ts.addr, opts)
		if err != nil {
			t.Fatal(err)
		}
		r := ts.resultFrom(c.Local.String())
		checkUDPServerCounts(t, r, c, session.DialectIperf2Legacy)
		checkReplyLayout(t, c, 12, 52, 0x80000000)
		checkStandinReport(t, c, r.Receiver)
	})
	t.Run("zperf-new", func(t *testing.T) {
		c, err := standin.ZperfNewUDPClient(deadlineCtx(t), ts.addr, opts)
		if err != nil {
			t.Fatal(err)
		}
		r := ts.resultFrom(c.Local.String())
		// zperf-new sends no 2.1 header (flags 0 at 16): a header-less
		// modern stream.
		checkUDPServerCounts(t, r, c, session.DialectRaw)
		if c.FINID != -301 {
			t.Errorf("zperf-new FIN id %d, want -301", c.FINID)
		}
		checkReplyLayout(t, c, 16, 56, 0x80000000)
		checkStandinReport(t, c, r.Receiver)
	})
	for _, first := range []int64{0, 1} {
		t.Run("esp-idf/first-id-"+strconv.FormatInt(first, 10), func(t *testing.T) {
			c, err := standin.ESPUDPClient(deadlineCtx(t), ts.addr, standin.UDPClientOptions{Count: 200, RateBps: standinRate, FirstID: first})
			if err != nil {
				t.Fatal(err)
			}
			if c.FINSends != 0 {
				t.Fatalf("the ESP-IDF stand-in sent %d FINs", c.FINSends)
			}
			r := ts.resultFrom(c.Local.String())
			rv := receiverOf(t, r)
			wantTotal := first + 199
			if rv.Packets != 200 || rv.Bytes != c.DataBytes || rv.Total != wantTotal || rv.Lost != 0 || rv.OutOfOrder != 0 || dupsOf(rv) != 0 {
				t.Errorf("receiver packets/bytes/total/lost/ooo/dup = %d/%d/%d/%d/%d/%d, want 200/%d/%d/0/0/0",
					rv.Packets, rv.Bytes, rv.Total, rv.Lost, rv.OutOfOrder, rv.Duplicates, c.DataBytes, wantTotal)
			}
			if r.Error != "" {
				t.Errorf("an ESP-IDF test that ends idle is a normal test, got error %q", r.Error)
			}
			if !resultcheck.HasWarning(r, "never sent a FIN") {
				t.Errorf("no idle-end warning in %q", r.Warnings)
			}
		})
	}
}

func TestStandinTCPClientsToServer(t *testing.T) {
	ts := startServer(t, session.ServerConfig{IdleTimeout: 2 * time.Second, HeaderTimeout: time.Second})
	const n = 3*128<<10 + 5000
	check := func(t *testing.T, c standin.TCPClientResult, wantDialect string) *result.Result {
		t.Helper()
		if c.SendErr != nil {
			t.Fatalf("%s client: %v", c.Dialect, c.SendErr)
		}
		r := ts.resultFrom(c.Local.String())
		rv := receiverOf(t, r)
		if rv.Bytes != c.BytesSent || c.BytesSent == 0 {
			t.Errorf("%s: our server counted %d bytes, the stand-in sent %d", c.Dialect, rv.Bytes, c.BytesSent)
		}
		if r.Test.Dialect != wantDialect {
			t.Errorf("%s: dialect %q, want %q", c.Dialect, r.Test.Dialect, wantDialect)
		}
		if r.Error != "" || len(r.Warnings) > 0 {
			t.Errorf("%s: error %q, warnings %q", c.Dialect, r.Error, r.Warnings)
		}
		if c.BackBytes != 0 {
			t.Errorf("%s: our server sent %d bytes back on the test connection", c.Dialect, c.BackBytes)
		}
		return r
	}
	t.Run("iperf-2.0.5", func(t *testing.T) {
		c, err := standin.Legacy205TCPClient(deadlineCtx(t), ts.addr, standin.TCPClientOptions{Bytes: n})
		if err != nil {
			t.Fatal(err)
		}
		// Flags 0: a 2.1 server takes the stream as plain data, and so
		// do we (check counts every byte sent); its 24 bytes are a 2.0.5
		// header all the same, so the test is named iperf2-legacy, not
		// raw (which says the peer sent no header).
		check(t, c, session.DialectIperf2Legacy)
		if c.BytesSent != n+24 {
			t.Errorf("2.0.5 stand-in sent %d bytes, want %d", c.BytesSent, n+24)
		}
	})
	for _, mode := range []struct {
		name           string
		tradeoff, dual bool
	}{{"iperf-2.0.5-r", true, false}, {"iperf-2.0.5-d", false, true}} {
		t.Run(mode.name, func(t *testing.T) {
			c, err := standin.Legacy205TCPClient(deadlineCtx(t), ts.addr, standin.TCPClientOptions{Bytes: n, Tradeoff: mode.tradeoff, Dual: mode.dual})
			if err != nil {
				t.Fatal(err)
			}
			r := check(t, c, session.DialectIperf2Legacy)
			if c.CallbackErr != nil || c.CallbackPeer == nil {
				t.Fatalf("connect-back: peer %v, error %v", c.CallbackPeer, c.CallbackErr)
			}
			if h, _, _ := net.SplitHostPort(c.CallbackPeer.String()); h != "127.0.0.1" {
				t.Errorf("connect-back came from %s", c.CallbackPeer)
			}
			// The 2.0.5 header asked for n bytes (-n): we send exactly that.
			if c.CallbackBytes != n {
				t.Errorf("connect-back carried %d bytes, want %d", c.CallbackBytes, n)
			}
			if r.Reverse == nil || r.Reverse.Sender == nil || r.Reverse.Sender.Bytes != c.CallbackBytes {
				t.Errorf("our result's reverse flow %+v, the stand-in received %d", r.Reverse, c.CallbackBytes)
			}
			if bytes.HasPrefix(c.CallbackFirst, c.Header[:4]) || len(c.CallbackFirst) < 10 || string(c.CallbackFirst[:10]) != "0123456789" {
				t.Errorf("connect-back stream starts % x, want the digit pattern and no header", c.CallbackFirst[:min(16, len(c.CallbackFirst))])
			}
		})
	}
	t.Run("lwiperf", func(t *testing.T) {
		c, err := standin.LwiperfTCPClient(deadlineCtx(t), ts.addr, standin.TCPClientOptions{Amount: -30})
		if err != nil {
			t.Fatal(err)
		}
		check(t, c, session.DialectIperf2Legacy) // flags 0, as 2.0.5's
	})
	for _, mode := range []struct {
		name           string
		tradeoff, dual bool
	}{{"lwiperf-r", true, false}, {"lwiperf-d", false, true}} {
		t.Run(mode.name, func(t *testing.T) {
			c, err := standin.LwiperfTCPClient(deadlineCtx(t), ts.addr, standin.TCPClientOptions{Amount: -30,
				Tradeoff: mode.tradeoff, Dual: mode.dual, MPort: loopback.FreePort(t)})
			if err != nil {
				t.Fatal(err)
			}
			r := check(t, c, session.DialectIperf2Legacy)
			if c.CallbackErr != nil || c.CallbackBytes == 0 {
				t.Fatalf("connect-back: %d bytes, error %v", c.CallbackBytes, c.CallbackErr)
			}
			if r.Reverse == nil || r.Reverse.Sender == nil || r.Reverse.Sender.Bytes != c.CallbackBytes {
				t.Errorf("our result's reverse flow %+v, the stand-in received %d", r.Reverse, c.CallbackBytes)
			}
		})
	}
	t.Run("zperf", func(t *testing.T) {
		c, err := standin.ZperfTCPClient(deadlineCtx(t), ts.addr, standin.TCPClientOptions{Bytes: 100_000})
		if err != nil {
			t.Fatal(err)
		}
		check(t, c, session.DialectRaw)
		if c.BytesSent != 100_000 {
			t.Errorf("zperf stand-in sent %d", c.BytesSent)
		}
	})
	t.Run("esp-idf", func(t *testing.T) {
		c, err := standin.ESPTCPClient(deadlineCtx(t), ts.addr, standin.TCPClientOptions{Bytes: 5*16384 + 100})
		if err != nil {
			t.Fatal(err)
		}
		check(t, c, session.DialectRaw)
	})
}

// clientCfg is a short client test against a stand-in server at addr.
func clientCfg(addr net.Addr, dialect string, udp bool) session.ClientConfig {
	host, port, _ := net.SplitHostPort(addr.String())
	cfg := session.ClientConfig{Host: host, Dialect: dialect, UDP: udp, Duration: 300 * time.Millisecond}
	cfg.Port, _ = strconv.Atoi(port)
	if udp {
		cfg.Rate = units.Rate{Value: 20e6}
		cfg.Length = 1470
	}
	return cfg
}

func TestClientToStandinUDPServers(t *testing.T) {
	// checkPeerReport compares what our client took from the report with
	// what the stand-in server put in it.
	checkPeerReport := func(t *testing.T, r *result.Result, s standin.UDPServerResult) {
		t.Helper()
		if !s.Completed {
			t.Fatalf("%s server did not complete: %+v", s.Dialect, s)
		}
		if r.Error != "" {
			t.Errorf("client error: %s", r.Error)
		}
		rv := receiverOf(t, r)
		rep := s.Report
		total := int64(rep.Datagrams)
		if rv.Counting == result.CountingReceived {
			total += int64(rep.ErrorCnt) // the old zperf's datagrams are those it received
		}
		if rv.Source != "peer-report" || rv.Total != total || rv.Lost != int64(rep.ErrorCnt) ||
			rv.OutOfOrder != int64(rep.OutOrderCnt) || rv.Bytes != int64(rep.TotalLen()) {
			t.Errorf("our client parsed %s total/lost/ooo/bytes %d/%d/%d/%d, the %s server sent %d/%d/%d/%d",
				rv.Source, rv.Total, rv.Lost, rv.OutOfOrder, rv.Bytes, s.Dialect, rep.Datagrams, rep.ErrorCnt, rep.OutOrderCnt, rep.TotalLen())
		}
		if rv.Lost != 0 || rv.OutOfOrder != 0 {
			t.Errorf("loopback test reports loss %d / reordering %d", rv.Lost, rv.OutOfOrder)
		}
		if resultcheck.HasWarning(r, "no server report") {
			t.Errorf("warnings: %q", r.Warnings)
		}
	}
	t.Run("iperf2-legacy→2.0.5", func(t *testing.T) {
		ctx := deadlineCtx(t)
		srv, err := standin.Legacy205UDPServer(ctx, "127.0.0.1:0", standin.UDPServerOptions{AckWait: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		r, err := runClient(ctx, clientCfg(srv.Addr(), session.DialectIperf2Legacy, true))
		if err != nil {
			t.Fatal(err)
		}
		s, err := srv.Wait()
		if err != nil {
			t.Fatal(err)
		}
		checkPeerReport(t, r, s)
		// 2.0.5 counts every datagram, id 0 and the FIN included; Total is
		// the FIN's |id| = the data datagrams we sent.
		if s.Counted != r.Sender.Packets || int64(s.Bytes) != r.Sender.Bytes || int64(s.Total) != r.Sender.Packets-1 {
			t.Errorf("2.0.5 counted %d datagrams / %d bytes, Total %d; we sent %d / %d", s.Counted, s.Bytes, s.Total, r.Sender.Packets, r.Sender.Bytes)
		}
		if s.FINID != int32(-(r.Sender.Packets - 1)) {
			t.Errorf("legacy FIN id %d, want %d", s.FINID, -(r.Sender.Packets - 1))
		}
	})
	t.Run("iperf2-legacy→zperf-old", func(t *testing.T) {
		ctx := deadlineCtx(t)
		srv, err := standin.ZperfOldUDPServer(ctx, "127.0.0.1:0", standin.UDPServerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := runClient(ctx, clientCfg(srv.Addr(), session.DialectIperf2Legacy, true))
		if err != nil {
			t.Fatal(err)
		}
		s, err := srv.Wait()
		if err != nil {
			t.Fatal(err)
		}
		checkPeerReport(t, r, s)
		// Old zperf skips the first datagram and does not count the FIN;
		// its report's total is what it received, and our client says so.
		if rv := r.Receiver; s.Counted != r.Sender.Packets-2 || rv.Counting != result.CountingReceived || rv.Packets != s.Counted {
			t.Errorf("zperf-old counted %d, we sent %d (FIN included); our client read %d received (%s)", s.Counted, r.Sender.Packets, rv.Packets, rv.Counting)
		}
	})
	t.Run("iperf2→zperf-new", func(t *testing.T) {
		ctx := deadlineCtx(t)
		srv, err := standin.ZperfNewUDPServer(ctx, "127.0.0.1:0", standin.UDPServerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := runClient(ctx, clientCfg(srv.Addr(), session.DialectIperf2, true))
		if err != nil {
			t.Fatal(err)
		}
		s, err := srv.Wait()
		if err != nil {
			t.Fatal(err)
		}
		checkPeerReport(t, r, s)
		if int64(s.Total) != r.Sender.Packets || s.Counted != r.Sender.Packets-1 || r.Receiver.Counting != result.CountingHighestID {
			t.Errorf("zperf-new Total %d, counted %d; we sent %d (FIN included)", s.Total, s.Counted, r.Sender.Packets)
		}
	})
}

func TestClientToStandinTCPServers(t *testing.T) {
	t.Run("iperf2-legacy→lwiperf", func(t *testing.T) {
		ctx := deadlineCtx(t)
		srv, err := standin.LwiperfTCPServer(ctx, "127.0.0.1:0", standin.TCPServerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := runClient(ctx, clientCfg(srv.Addr(), session.DialectIperf2Legacy, false))
		if err != nil {
			t.Fatal(err)
		}
		s, err := srv.Wait()
		if err != nil {
			t.Fatal(err)
		}
		checkLwiperf(t, r, s)
	})
	for _, mode := range []struct {
		name           string
		tradeoff, dual bool
	}{{"-r", true, false}, {"-d", false, true}} {
		t.Run("iperf2-legacy→lwiperf"+mode.name, func(t *testing.T) {
			ctx := deadlineCtx(t)
			srv, err := standin.LwiperfTCPServer(ctx, "127.0.0.1:0", standin.TCPServerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cfg := clientCfg(srv.Addr(), session.DialectIperf2Legacy, false)
			cfg.Tradeoff, cfg.Dual, cfg.ListenPort = mode.tradeoff, mode.dual, loopback.FreePort(t)
			r, err := runClient(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			s, err := srv.Wait()
			if err != nil {
				t.Fatal(err)
			}
			checkLwiperf(t, r, s)
			if s.CallbackErr != nil || s.CallbackBytes == 0 {
				t.Fatalf("lwiperf connect-back: %d bytes, %v", s.CallbackBytes, s.CallbackErr)
			}
			if r.Reverse == nil || r.Reverse.Receiver == nil || r.Reverse.Receiver.Bytes != s.CallbackBytes {
				t.Errorf("our reverse flow %+v, lwiperf sent %d", r.Reverse, s.CallbackBytes)
			}
		})
	}
	t.Run("raw→sink", func(t *testing.T) {
		ctx := deadlineCtx(t)
		srv, err := standin.TCPSink(ctx, "127.0.0.1:0", standin.TCPServerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cfg := clientCfg(srv.Addr(), session.DialectRaw, false)
		cfg.Length = 1000
		r, err := runClient(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		s, err := srv.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if r.Error != "" || r.Sender == nil || r.Sender.Bytes != s.Bytes || s.Bytes == 0 {
			t.Errorf("sink counted %d bytes; our client: sent %+v, error %q", s.Bytes, r.Sender, r.Error)
		}
		if len(s.FirstRead) < 4 || binary.BigEndian.Uint32(s.FirstRead) != 0 {
			t.Errorf("raw stream starts % x, want a zero word", s.FirstRead[:min(8, len(s.FirstRead))])
		}
	})
}

// checkLwiperf checks an lwiperf session fed by our legacy TCP client.
func checkLwiperf(t *testing.T, r *result.Result, s standin.LwiperfServerResult) {
	t.Helper()
	if s.Aborted {
		t.Fatalf("lwiperf aborted at offset %d: %s", s.AbortOffset, s.AbortReason)
	}
	if r.Error != "" {
		t.Errorf("client error: %s", r.Error)
	}
	if r.Sender == nil || r.Sender.Bytes != s.Bytes {
		t.Fatalf("lwiperf counted %d bytes, our client sent %+v", s.Bytes, r.Sender)
	}
	// A header check at every 128 KiB boundary after byte 24.
	want := int((s.Bytes-24-1)/(128<<10)) + 1
	if s.Checks != want {
		t.Errorf("lwiperf passed %d header checks over %d bytes, want %d", s.Checks, s.Bytes, want)
	}
	if s.Header.NumThreads != 1 || s.Header.Amount != -30 {
		t.Errorf("lwiperf read header %+v", s.Header)
	}
}
