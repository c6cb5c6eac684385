package standin

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wirebench/wirebench/internal/testutil/loopback"
)

func testCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestSchedule(t *testing.T) {
	tests := []struct {
		name string
		plan Impairment
		n    int64
		want []int64
		inj  Injected
	}{
		{"none", Impairment{}, 4, []int64{0, 1, 2, 3}, Injected{}},
		{"drop", Impairment{Drop: []int64{1, 2}}, 4, []int64{0, 3}, Injected{Dropped: []int64{1, 2}}},
		{"swap", Impairment{Swap: [][2]int64{{1, 2}}}, 4, []int64{0, 2, 1, 3}, Injected{Swapped: [][2]int64{{1, 2}}}},
		{"swap far", Impairment{Swap: [][2]int64{{0, 3}}}, 5, []int64{1, 2, 3, 0, 4}, Injected{Swapped: [][2]int64{{0, 3}}}},
		{"swap unreached", Impairment{Swap: [][2]int64{{2, 9}}}, 4, []int64{0, 1, 3, 2}, Injected{}},
		{"repeat", Impairment{Repeat: []int64{2}}, 4, []int64{0, 1, 2, 2, 3}, Injected{Repeated: []int64{2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newScheduler(tt.plan)
			var got []int64
			for id := range tt.n {
				got = append(got, s.next(id)...)
			}
			got = append(got, s.flush()...)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.inj, s.injected); diff != "" {
				t.Errorf("injected (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	h := ClientHdrV1{Flags: 0x80000001, NumThreads: 1, MPort: 5002, BufLen: 1470, WinBand: 1e6, Amount: -200}
	want := []byte{0x80, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0x13, 0x8a, 0, 0, 0x05, 0xbe, 0, 0x0f, 0x42, 0x40, 0xff, 0xff, 0xff, 0x38}
	if got := h.Bytes(); !bytes.Equal(got, want) {
		t.Fatalf("bytes = % x, want % x", got, want)
	}
	back, err := ParseClientHdrV1(want)
	if err != nil || back != h {
		t.Fatalf("parse = %+v, %v", back, err)
	}
	r := ServerReport{Flags: flagVersion1, TotalLen1: 1, TotalLen2: 2, StopSec: 3, StopUsec: 4,
		ErrorCnt: 5, OutOrderCnt: 6, Datagrams: 7, Jitter1: 8, Jitter2: 9}
	b := make([]byte, 12+serverHdrLen)
	r.put(b[12:])
	if got, err := ParseServerReport(b, 12); err != nil || got != r || got.TotalLen() != 1<<32+2 {
		t.Fatalf("report round trip = %+v, %v", got, err)
	}
}

// TestLegacy205UDP pairs the 2.0.5 client and server with an impairment plan
// and checks the 2.0.5 accounting of §1.6 exactly.
func TestLegacy205UDP(t *testing.T) {
	ctx := testCtx(t, 20*time.Second)
	srv, err := Legacy205UDPServer(ctx, "127.0.0.1:0", UDPServerOptions{AckWait: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	plan := Impairment{Drop: []int64{10, 11}, Swap: [][2]int64{{20, 21}}, Repeat: []int64{30}}
	cl, err := Legacy205UDPClient(ctx, srv.Addr().String(), UDPClientOptions{Count: 60, RateBps: 50e6, Impair: plan})
	if err != nil {
		t.Fatal(err)
	}
	sr, err := srv.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Injected{Dropped: plan.Drop, Swapped: plan.Swap, Repeated: plan.Repeat}, cl.Injected); diff != "" {
		t.Errorf("injected (-want +got):\n%s", diff)
	}
	if cl.DataPackets != 59 || cl.FINID != -60 || cl.FINSends != 1 {
		t.Errorf("client sent %d data, FIN %d ×%d; want 59, -60 ×1", cl.DataPackets, cl.FINID, cl.FINSends)
	}
	// 2.0.5: gaps 10,11 and 21-before-20 give 3 lost; late 20 and repeated
	// 30 give 2 out-of-order; reported lost = 3 − 2.
	if sr.Total != 60 || sr.Lost != 1 || sr.OutOfOrder != 2 {
		t.Errorf("server total/lost/ooo = %d/%d/%d, want 60/1/2", sr.Total, sr.Lost, sr.OutOfOrder)
	}
	if sr.Counted != 60 || sr.Bytes != 60*1470 {
		t.Errorf("server counted %d datagrams %d bytes, want 60 and %d", sr.Counted, sr.Bytes, 60*1470)
	}
	if len(sr.Replies) != 1 || len(sr.Replies[0]) != 1470 {
		t.Fatalf("replies = %d, want one of 1470 bytes", len(sr.Replies))
	}
	rep := sr.Replies[0]
	if !bytes.Equal(rep[:12], cl.FINDatagram[:12]) || binary.BigEndian.Uint32(rep[12:]) != 0x80000000 {
		t.Errorf("reply head % x, want FIN echo % x + 80000000", rep[:16], cl.FINDatagram[:12])
	}
	if !cl.ReportAccepted || cl.Report == nil || *cl.Report != sr.Report {
		t.Errorf("client report %+v accepted=%v (%s), server sent %+v", cl.Report, cl.ReportAccepted, cl.ReportNote, sr.Report)
	}
}

// TestZperfUDP pairs each zperf client with its own server (§5.1).
func TestZperfUDP(t *testing.T) {
	t.Run("old", func(t *testing.T) {
		ctx := testCtx(t, 20*time.Second)
		srv, err := ZperfOldUDPServer(ctx, "127.0.0.1:0", UDPServerOptions{Linger: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		cl, err := ZperfOldUDPClient(ctx, srv.Addr().String(), UDPClientOptions{Count: 50, Length: 256, RateBps: 20e6,
			Impair: Impairment{Drop: []int64{10}}})
		if err != nil {
			t.Fatal(err)
		}
		sr, err := srv.Wait()
		if err != nil {
			t.Fatal(err)
		}
		// ids 0..49 minus 10: id 0 only starts the session, 48 counted.
		if sr.Counted != 48 || sr.Total != 48 || sr.Lost != 1 || sr.OutOfOrder != 0 || sr.Bytes != 48*256 {
			t.Errorf("server counted=%d total=%d lost=%d ooo=%d bytes=%d", sr.Counted, sr.Total, sr.Lost, sr.OutOfOrder, sr.Bytes)
		}
		if cl.FINID != -50 || len(sr.Replies) != 1 || len(sr.Replies[0]) != 52 {
			t.Fatalf("FIN %d, %d replies", cl.FINID, len(sr.Replies))
		}
		if !bytes.Equal(sr.Replies[0][:12], cl.FINDatagram[:12]) || *cl.Report != sr.Report {
			t.Errorf("client parsed %+v, server sent %+v", cl.Report, sr.Report)
		}
		if got := binary.BigEndian.Uint32(cl.FirstDatagram[16:]); got != 1 {
			t.Errorf("numThreads word at 16 = %d, want 1", got)
		}
	})
	t.Run("new", func(t *testing.T) {
		ctx := testCtx(t, 20*time.Second)
		srv, err := ZperfNewUDPServer(ctx, "127.0.0.1:0", UDPServerOptions{Linger: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		cl, err := ZperfNewUDPClient(ctx, srv.Addr().String(), UDPClientOptions{Count: 50, Length: 256, RateBps: 20e6,
			Impair: Impairment{Swap: [][2]int64{{20, 21}}}})
		if err != nil {
			t.Fatal(err)
		}
		sr, err := srv.Wait()
		if err != nil {
			t.Fatal(err)
		}
		// ids 1..50 all counted, FIN −51; the swap is healed by the window.
		if sr.Counted != 50 || sr.Total != 51 || sr.Lost != 0 || sr.OutOfOrder != 1 || sr.Bytes != 50*256 {
			t.Errorf("server counted=%d total=%d lost=%d ooo=%d bytes=%d", sr.Counted, sr.Total, sr.Lost, sr.OutOfOrder, sr.Bytes)
		}
		if cl.FINID != -51 || len(sr.Replies) != 1 || len(sr.Replies[0]) != 56 {
			t.Fatalf("FIN %d, %d replies", cl.FINID, len(sr.Replies))
		}
		if !bytes.Equal(sr.Replies[0][:16], cl.FINDatagram[:16]) || *cl.Report != sr.Report {
			t.Errorf("client parsed %+v, server sent %+v", cl.Report, sr.Report)
		}
		if !bytes.Equal(cl.FirstDatagram[12:16], []byte("zzzz")) {
			t.Errorf("id2 = % x, want 'zzzz'", cl.FirstDatagram[12:16])
		}
	})
}

func TestESPUDPClientNoFIN(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	srv, err := Legacy205UDPServer(ctx, "127.0.0.1:0", UDPServerOptions{Idle: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := ESPUDPClient(ctx, srv.Addr().String(), UDPClientOptions{Count: 20, FirstID: 1, RateBps: 20e6})
	if err != nil {
		t.Fatal(err)
	}
	sr, err := srv.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if cl.FINSends != 0 || !sr.TimedOut || sr.Completed || sr.Received != 20 {
		t.Errorf("FINs=%d timedOut=%v completed=%v received=%d", cl.FINSends, sr.TimedOut, sr.Completed, sr.Received)
	}
	want := make([]byte, 1470)
	want[3] = 1
	if !bytes.Equal(cl.FirstDatagram, want) {
		t.Errorf("first datagram is not zeros with id 1 at 0")
	}
	if !slices.Equal(sr.IDs[:3], []int32{1, 2, 3}) {
		t.Errorf("ids = %v", sr.IDs[:3])
	}
}

// TestLwiperfServer checks the §5.2 rules against the 2.0.5 and lwiperf
// clients.
func TestLwiperfServer(t *testing.T) {
	t.Run("2.0.5 tradeoff accepted and connected back", func(t *testing.T) {
		ctx := testCtx(t, 20*time.Second)
		srv, err := LwiperfTCPServer(ctx, "127.0.0.1:0", TCPServerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cl, err := Legacy205TCPClient(ctx, srv.Addr().String(), TCPClientOptions{Duration: 200 * time.Millisecond, Tradeoff: true})
		if err != nil {
			t.Fatal(err)
		}
		sr, err := srv.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if sr.Aborted || sr.Bytes != cl.BytesSent || int64(sr.Checks) != cl.Writes {
			t.Errorf("aborted=%v (%s) bytes=%d/%d checks=%d writes=%d", sr.Aborted, sr.AbortReason, sr.Bytes, cl.BytesSent, sr.Checks, cl.Writes)
		}
		if sr.Header.Flags != 0x80000000 || sr.Header.Amount != -20 {
			t.Errorf("header %+v", sr.Header)
		}
		if sr.CallbackErr != nil || cl.CallbackErr != nil || cl.CallbackBytes == 0 || cl.CallbackBytes != sr.CallbackBytes {
			t.Errorf("connect-back: server sent %d (%v), client got %d (%v)", sr.CallbackBytes, sr.CallbackErr, cl.CallbackBytes, cl.CallbackErr)
		}
		head := append(ClientHdrV1{NumThreads: 1, MPort: sr.Header.MPort, Amount: -20}.Bytes(), ClientHdrV1{NumThreads: 1, MPort: sr.Header.MPort, Amount: -20}.Bytes()...)
		if !bytes.HasPrefix(cl.CallbackFirst, head) || cl.CallbackFirst[48] != '8' {
			t.Errorf("connect-back head % x", cl.CallbackFirst[:52])
		}
	})
	t.Run("lwiperf dual aborted at 24+128KiB", func(t *testing.T) {
		ctx := testCtx(t, 20*time.Second)
		srv, err := LwiperfTCPServer(ctx, "127.0.0.1:0", TCPServerOptions{NoConnectBack: true})
		if err != nil {
			t.Fatal(err)
		}
		cl, err := LwiperfTCPClient(ctx, srv.Addr().String(), TCPClientOptions{Amount: -20, Dual: true,
			MPort: loopback.FreePort(t), CallbackWait: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		sr, err := srv.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if cl.BytesSent < 24+tcpChunk+24 {
			t.Skipf("client sent only %d bytes in 200 ms", cl.BytesSent)
		}
		if !sr.Aborted || sr.AbortOffset != 24+tcpChunk || sr.Checks != 1 {
			t.Errorf("aborted=%v at %d (%s), checks=%d", sr.Aborted, sr.AbortOffset, sr.AbortReason, sr.Checks)
		}
	})
	t.Run("short first segment aborted", func(t *testing.T) {
		ctx := testCtx(t, 10*time.Second)
		srv, err := LwiperfTCPServer(ctx, "127.0.0.1:0", TCPServerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c, err := net.Dial("tcp", srv.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write(make([]byte, 10))
		_ = c.Close()
		sr, err := srv.Wait()
		if err != nil || !sr.Aborted || sr.AbortOffset != 0 {
			t.Errorf("aborted=%v at %d, err %v", sr.Aborted, sr.AbortOffset, err)
		}
	})
}

func TestHeaderlessTCPClientsToSink(t *testing.T) {
	tests := []struct {
		name string
		run  func(context.Context, string, TCPClientOptions) (TCPClientResult, error)
		head []byte
	}{
		{"zperf", ZperfTCPClient, []byte{0, 0, 0, 0, 'z', 'z'}},
		{"esp", ESPTCPClient, []byte{0, 0, 0, 0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t, 10*time.Second)
			srv, err := TCPSink(ctx, "127.0.0.1:0", TCPServerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cl, err := tt.run(ctx, srv.Addr().String(), TCPClientOptions{Bytes: 100_000})
			if err != nil {
				t.Fatal(err)
			}
			sr, err := srv.Wait()
			if err != nil {
				t.Fatal(err)
			}
			if cl.BytesSent != 100_000 || sr.Bytes != 100_000 || !bytes.HasPrefix(sr.FirstRead, tt.head) {
				t.Errorf("sent %d, sink got %d, head % x", cl.BytesSent, sr.Bytes, sr.FirstRead[:6])
			}
		})
	}
}
