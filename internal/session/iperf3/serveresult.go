package iperf3

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"time"

	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

func (sv *i3ServerTest) newResult() *result.Result {
	t, p := sv.t, sv.t.p
	proto := result.TCP
	if t.udp {
		proto = result.UDP
	}
	r := session.NewServerResult(proto, session.DialectIperf3, t.peer, sv.ctrl.LocalAddr().(*net.TCPAddr).Port)
	r.Version = session.VersionString()
	r.StartedAt = sv.start.UTC()
	r.Test.PeerVersion = p.ClientVersion
	t.recordSocket(r)
	if p.WB != nil && p.WB.Agent != "" {
		r.Test.PeerVersion = p.WB.Agent
	}
	r.Test.Duration, r.Test.Bytes = float64(p.Time), p.Num
	r.Test.Length, r.Test.Streams = int(p.Len), p.StreamsPerDirection()
	if t.udp && p.Bandwidth > 0 && p.Len > 0 {
		r.Test.RateBPS = float64(p.Bandwidth) * float64(p.StreamsPerDirection())
		r.Test.RatePPS = r.Test.RateBPS / float64(p.Len*8)
	}
	switch {
	case p.Reverse:
		r.Test.Direction, r.Test.Mode = result.DirSend, "reverse"
	case p.Bidirectional:
		r.Test.Direction, r.Test.Mode = result.DirBidir, "bidir"
	}
	return r
}

// fill puts our own counts into the result.
func (sv *i3ServerTest) fill() {
	r, udp := sv.r, sv.t.udp
	var snd result.Sender
	var rcv result.Receiver
	var nSend, nRecv int
	for _, st := range sv.t.streams {
		rs := result.Stream{ID: int(st.id)}
		if st.send {
			nSend++
			sd := &result.Sender{Bytes: st.tcpRes.Bytes, Seconds: st.tcpRes.End.Sub(st.tcpRes.Start).Seconds()}
			if st.uconn != nil {
				sd = &result.Sender{Bytes: st.udpRes.Bytes, Packets: st.udpRes.Packets, SendErrors: st.udpRes.Errors,
					Seconds: st.udpRes.End.Sub(st.udpRes.Start).Seconds()}
			}
			session.RateOf(sd)
			snd.Bytes += sd.Bytes
			snd.Packets += sd.Packets
			snd.SendErrors += sd.SendErrors
			snd.Seconds = max(snd.Seconds, sd.Seconds)
			rs.Sender = sd
			if sv.t.p.Bidirectional {
				rs.Flow = "reverse"
			}
		} else {
			nRecv++
			var rr *result.Receiver
			if st.urx != nil {
				rr = i3LocalReceiver(st.totals, sv.start, sv.end, st.uconn)
			} else {
				rr = &result.Receiver{Bytes: st.tcpRes.Bytes, Seconds: sv.end.Sub(sv.start).Seconds(), Source: "local"}
				i3Rates(rr, false)
			}
			session.SumReceiver(&rcv, rr)
			rs.Receiver = rr
		}
		if st.err != nil && r.Error == "" {
			r.Error = fmt.Sprintf("stream %d: %v", st.id, st.err)
		}
		if len(sv.t.streams) > 1 {
			r.Streams = append(r.Streams, rs)
		}
	}
	session.RateOf(&snd)
	if !udp {
		snd.PacketsPerSecond, rcv.PacketsPerSecond = 0, 0
	}
	if nRecv > 0 {
		r.Receiver = &rcv
	}
	if nSend > 0 {
		if nRecv > 0 {
			r.Reverse = &result.Flow{Direction: result.DirSend, Sender: &snd}
		} else {
			r.Sender = &snd
		}
	}
}

// ourResults is the server's results JSON.
func (sv *i3ServerTest) ourResults() *i3wire.Results {
	p := sv.t.p
	res := &i3wire.Results{}
	res.CPUUtilTotal, res.CPUUtilUser, res.CPUUtilSystem = sv.t.hub.s.CPUSoFar(sv.id)
	endT := sv.end.Sub(sv.start).Seconds()
	var send []bool
	var retr []i3Retr
	for _, st := range sv.t.streams {
		send, retr = append(send, st.send), append(retr, st.retr)
		sr := i3wire.StreamResult{ID: st.id, EndTime: endT}
		switch {
		case st.uconn != nil:
			sr.Bytes, sr.Packets = st.udpRes.Bytes, st.udpRes.Packets
		case st.send:
			sr.Bytes = st.tcpRes.Bytes
		case st.urx != nil:
			tt := st.totals
			sr.Bytes, sr.Packets, sr.Errors, sr.Jitter = tt.bytes, tt.maxSeq, tt.lost, tt.jitter.Seconds()
		default:
			sr.Bytes = st.tcpRes.Bytes
		}
		res.Streams = append(res.Streams, sr)
	}
	i3SetRetrans(res, sv.t.udp, send, retr)
	omitStreamResults(res, sv.omitted, time.Duration(p.Omit)*time.Second)
	if p.WB != nil {
		wb := &i3wire.WBResults{Version: i3wire.WBVersion, Agent: "wirebench/" + session.VersionString()}
		ivs := i3WBIntervals(sv.perIv)
		for _, st := range sv.t.streams {
			if st.send {
				continue
			}
			ws := i3wire.WBStream{ID: st.id, Intervals: ivs[st.id]}
			if st.urx != nil {
				ws.Duplicates, ws.OutOfOrder = st.totals.dups, st.totals.ooo
			}
			wb.Streams = append(wb.Streams, ws)
		}
		res.WB = wb
	}
	if p.GetServerOutput {
		res.ServerOutputText = sv.text()
	}
	return res
}

// text renders the test as the server's human report.
func (sv *i3ServerTest) text() string {
	var b bytes.Buffer
	tx := report.NewText(&b, "1")
	tx.Header(sv.r.Test, "server", "", sv.r.Test.Peer)
	for _, in := range sv.r.Intervals {
		tx.Interval("1", in, sv.t.udp, in.Flow != "reverse" && !sv.t.p.Reverse)
	}
	tx.Summary(sv.r)
	return b.String()
}

// exchange runs EXCHANGE_RESULTS to IPERF_DONE and reports the result.
func (sv *i3ServerTest) exchange(ctx context.Context) error {
	fail := func(err error) error { return fail(sv, err) }
	if err := sv.send(ctx, i3wire.ExchangeResults); err != nil {
		return fail(err)
	}
	sctx, cancel := step(ctx)
	defer cancel()
	peer, err := sv.conn.ReadResults(sctx)
	if err != nil {
		_ = sv.refuse(ctx, &i3wire.ServerErr{IErrno: i3wire.ErrnoRecvResults})
		return fail(fmt.Errorf("reading the client's results: %w", err))
	}
	sv.peerCounts(peer)
	sv.r.CPU = &result.CPU{Remote: &result.RemoteCPU{Percent: peer.CPUUtilTotal, UserPercent: peer.CPUUtilUser,
		SystemPercent: peer.CPUUtilSystem}}
	if err := sv.conn.WriteResults(sctx, sv.ourResults()); err != nil {
		return fail(fmt.Errorf("sending our results: %w", err))
	}
	if err := sv.send(ctx, i3wire.DisplayResults); err != nil {
		return fail(err)
	}
	st, err := sv.conn.ReadState(sctx)
	if err == nil {
		err = sv.m.Recv(st)
	}
	if err == nil && st != i3wire.IperfDone {
		err = fmt.Errorf("the client sent %v instead of IPERF_DONE", st)
	}
	if err != nil {
		sv.r.Warn("the client did not end the conversation cleanly: " + err.Error())
	}
	sv.finish()
	return nil
}

// peerCounts takes the receive counts of the streams we sent on from the
// client's results.
func (sv *i3ServerTest) peerCounts(peer *i3wire.Results) {
	var ids []int64
	for _, st := range sv.t.streams {
		if st.send {
			ids = append(ids, st.id)
		}
	}
	if len(ids) == 0 {
		return
	}
	sum, per, lossWhole, err := i3PeerReceiver(peer, ids, sv.t.udp, time.Duration(sv.t.p.Omit)*time.Second, sv.omitted)
	if lossWhole {
		sv.r.Warn(session.OmitLossWarning)
	}
	if err != nil {
		sv.r.Warn("the client's results do not match our streams: " + err.Error())
		return
	}
	for i, id := range ids {
		for k := range sv.r.Streams {
			if st := &sv.r.Streams[k]; int64(st.ID) == id {
				st.Receiver = per[i]
			}
		}
	}
	if sv.r.Reverse != nil {
		sv.r.Reverse.Receiver = sum
	} else {
		sv.r.Receiver = sum
	}
}
