package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/wirebench/wirebench/internal/version"
	"github.com/wirebench/wirebench/internal/wire/iperf3"
)

// iperf3TestBytes is the size of the tiny iperf3 test (one block, -n).
const iperf3TestBytes = 1024

// iperf3SettleTime is the pause between the test data and TEST_END.
const iperf3SettleTime = 20 * time.Millisecond

// iperf3Test runs a complete 1 KiB TCP test on control connection c, which
// has just received PARAM_EXCHANGE, so that the server ends in its normal
// state instead of logging an abandoned client. The parameters carry the
// wirebench extension (wb_version): a wirebench server answers it.
func (p *prober) iperf3Test(ctx context.Context, c net.Conn, ck iperf3.Cookie) {
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(ctx, 4*p.cfg.Timeout)
	defer cancel()
	defer c.Close()
	srv, err := p.iperf3Conversation(ctx, iperf3.NewConn(c), ck)
	if err != nil {
		p.res.Iperf3.Error = err.Error()
		p.step("iperf3-test", "failed", err.Error(), t0)
		return
	}
	// The next test finds the server idle only once it has closed this
	// connection (iperf3 -s serves one test at a time).
	waitClosed(c, 2*p.cfg.Timeout)
	p.res.Iperf3.TestCompleted = true
	p.res.Iperf3.SentBytes = iperf3TestBytes
	if s := srv.Stream(1); s != nil {
		p.res.Iperf3.ServerBytes = s.Bytes
	}
	detail := fmt.Sprintf("%d bytes sent, server counted %d", iperf3TestBytes, p.res.Iperf3.ServerBytes)
	if srv.WB != nil {
		p.res.Wirebench.Iperf3Ext, p.res.Wirebench.Agent = true, srv.WB.Agent
		detail += fmt.Sprintf("; wb_version %d, agent %q", srv.WB.Version, srv.WB.Agent)
	}
	p.step("iperf3-test", "completed", detail, t0)
}

// iperf3Conversation is the client side of wire-protocols.md §4.1 for one
// TCP stream; it returns the server's results.
func (p *prober) iperf3Conversation(ctx context.Context, conn *iperf3.Conn, ck iperf3.Cookie) (*iperf3.Results, error) {
	params := &iperf3.Params{
		Protocol: iperf3.ProtoTCP, Num: iperf3TestBytes, Len: iperf3TestBytes, Parallel: 1,
		WB: &iperf3.WBParams{Version: iperf3.WBVersion, Agent: "wirebench/" + version.String(), Probe: true},
	}
	if err := conn.WriteParams(ctx, params); err != nil {
		return nil, err
	}
	if err := expectState(ctx, conn, iperf3.CreateStreams); err != nil {
		return nil, err
	}
	data, err := p.dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("opening the data stream: %w", err)
	}
	defer data.Close()
	if _, err := data.Write(ck.AppendWire(nil)); err != nil {
		return nil, fmt.Errorf("writing the data stream cookie: %w", err)
	}
	for _, s := range []iperf3.State{iperf3.TestStart, iperf3.TestRunning} {
		if err := expectState(ctx, conn, s); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	if _, err := data.Write(make([]byte, iperf3TestBytes)); err != nil {
		return nil, fmt.Errorf("writing test data: %w", err)
	}
	// The server counts only what it reads before TEST_END; a real -n client
	// sends TEST_END right after its last write and races the same way. A
	// short pause lets the data arrive first in the common case.
	time.Sleep(iperf3SettleTime)
	if err := conn.WriteState(ctx, iperf3.TestEnd); err != nil {
		return nil, err
	}
	if err := expectState(ctx, conn, iperf3.ExchangeResults); err != nil {
		return nil, err
	}
	elapsed := time.Since(start).Seconds()
	ours := &iperf3.Results{SenderHasRetransmits: 0, Streams: []iperf3.StreamResult{{
		ID: 1, Bytes: iperf3TestBytes, Retransmits: -1, EndTime: elapsed,
	}}}
	if err := conn.WriteResults(ctx, ours); err != nil {
		return nil, err
	}
	theirs, err := conn.ReadResults(ctx)
	if err != nil {
		return nil, err
	}
	if err := expectState(ctx, conn, iperf3.DisplayResults); err != nil {
		return nil, err
	}
	if err := conn.WriteState(ctx, iperf3.IperfDone); err != nil {
		return nil, err
	}
	return theirs, nil
}

// expectState reads one state byte and checks it; SERVER_ERROR is decoded.
func expectState(ctx context.Context, conn *iperf3.Conn, want iperf3.State) error {
	s, err := conn.ReadState(ctx)
	if err != nil {
		return fmt.Errorf("waiting for %v: %w", want, err)
	}
	switch s {
	case want:
		return nil
	case iperf3.ServerError:
		se, err := conn.ReadServerErr(ctx)
		if err != nil {
			return fmt.Errorf("server error before %v: %w", want, err)
		}
		return fmt.Errorf("server error before %v: %w", want, se)
	}
	return fmt.Errorf("got %v, want %v: %w", s, want, errUnexpected)
}

var errUnexpected = errors.New("unexpected iperf3 state")
