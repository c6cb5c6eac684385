package iperf3

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/wirebench/wirebench/internal/cpuuse"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

// exchange sends our results and reads the server's after EXCHANGE_RESULTS.
func (cl *i3Client) exchange(ctx context.Context) error {
	sctx, cancel := step(ctx)
	defer cancel()
	cl.sent = cl.ourResults()
	if err := cl.conn.WriteResults(sctx, cl.sent); err != nil {
		return fmt.Errorf("sending our iperf3 results: %w", err)
	}
	cl.conn.MaxJSON = 16 << 20 // server_output_json of a long test
	res, err := cl.conn.ReadResults(sctx)
	if err != nil {
		return fmt.Errorf("reading the iperf3 server's results: %w", err)
	}
	cl.peer = res
	if err := cl.expect(sctx, i3wire.DisplayResults); err != nil {
		return err
	}
	if err := cl.conn.WriteState(sctx, i3wire.IperfDone); err != nil {
		return fmt.Errorf("sending IPERF_DONE: %w", err)
	}
	return cl.m.Send(i3wire.IperfDone)
}

// ourResults is our side's results JSON.
func (cl *i3Client) ourResults() *i3wire.Results {
	res := &i3wire.Results{}
	var send []bool
	var retr []i3Retr
	if u, ok := cpuuse.Between(cl.cpu0, cpuuse.Now()); ok {
		res.CPUUtilTotal, res.CPUUtilUser, res.CPUUtilSystem = u.Percent()
	}
	for _, s := range cl.streams {
		send, retr = append(send, s.send), append(retr, s.retr)
		sr := i3wire.StreamResult{ID: s.id}
		switch {
		case s.send && s.udp != nil:
			sr.Bytes, sr.Packets = s.udpRes.Bytes, s.udpRes.Packets
			sr.StartTime, sr.EndTime = 0, s.udpRes.End.Sub(cl.start).Seconds()
		case s.send:
			sd := s.sent().Sender()
			if sd.TCP != nil {
				sr.Retransmits, res.SenderHasRetransmits = sd.TCP.Retransmits, 1
			}
			sr.Bytes = sd.Bytes
			sr.EndTime = s.tcpRes.Start.Sub(cl.start).Seconds() + sd.Seconds
		case s.urx != nil:
			t := s.totals
			sr.Bytes, sr.Packets, sr.Errors, sr.Jitter = t.bytes, t.maxSeq, t.lost, t.jitter.Seconds()
			sr.EndTime = cl.end.Sub(cl.start).Seconds()
		default:
			sr.Bytes = s.tcpRes.Bytes
			sr.EndTime = cl.end.Sub(cl.start).Seconds()
		}
		sr.EndTime = max(sr.EndTime, 0)
		res.Streams = append(res.Streams, sr)
	}
	i3SetRetrans(res, cl.cfg.UDP, send, retr)
	omitStreamResults(res, cl.omitted, cl.cfg.Omit)
	return res
}

// fill puts the figures into the result: our own counts, and the peer's
// receive counts from its results.
func (cl *i3Client) fill() {
	r := cl.r
	var t clientTotals
	for _, s := range cl.streams {
		st := &result.Stream{ID: int(s.id)}
		if s.send {
			cl.addSendStream(&t, s, st)
		} else {
			cl.addRecvStream(&t, s, st)
		}
		if s.err != nil && r.Error == "" {
			r.Error = fmt.Sprintf("stream %d: %v", s.id, s.err)
		}
	}
	if !cl.cfg.UDP {
		t.rcv.PacketsPerSecond = 0
	}
	var peerRcv *result.Receiver
	if len(t.sendIDs) > 0 {
		peerRcv = cl.sendSummary(&t)
	}
	cl.place(&t, peerRcv)
}

// clientTotals gathers the streams' figures while fill walks them.
type clientTotals struct {
	snd                      result.Sender
	rcv                      result.Receiver
	sendIDs                  []int64
	sendStreams, recvStreams []*result.Stream
	first, last              time.Time // the send streams' span
}

// addSendStream puts the figures of stream s, which we send on, into st
// and the totals.
func (cl *i3Client) addSendStream(t *clientTotals, s *i3ClientStream, st *result.Stream) {
	udp := cl.cfg.UDP
	t.sendIDs = append(t.sendIDs, s.id)
	var sd *result.Sender
	var a, b time.Time
	if !udp {
		sent := s.sent()
		sd = sent.Sender()
		session.WarnDelivery(cl.r, sent)
		a, b = s.tcpRes.Start, s.tcpRes.Start.Add(time.Duration(sd.Seconds*float64(time.Second)))
	} else {
		sd = &result.Sender{Bytes: s.udpRes.Bytes, Packets: s.udpRes.Packets, SendErrors: s.udpRes.Errors,
			Seconds: s.udpRes.End.Sub(s.udpRes.Start).Seconds(), Pacing: s.udpRes.Pacing.String()}
		a, b = s.udpRes.Start, s.udpRes.End
	}
	if t.first.IsZero() || a.Before(t.first) {
		t.first = a
	}
	t.last = later(t.last, b)
	session.RateOf(sd)
	if !udp {
		sd.PacketsPerSecond = 0
	}
	t.snd.Bytes += sd.Bytes
	session.AddTCPFigures(&t.snd, sd)
	t.snd.Packets += sd.Packets
	t.snd.SendErrors += sd.SendErrors
	t.snd.Pacing = cmp.Or(t.snd.Pacing, sd.Pacing)
	st.Sender = sd
	t.sendStreams = append(t.sendStreams, st)
}

// addRecvStream puts the figures of stream s, which we receive on, into st
// and the totals.
func (cl *i3Client) addRecvStream(t *clientTotals, s *i3ClientStream, st *result.Stream) {
	var rr *result.Receiver
	if s.urx != nil {
		rr = i3LocalReceiver(s.totals, cl.start, cl.end, s.udp)
	} else {
		rr = &result.Receiver{Bytes: s.tcpRes.Bytes, Seconds: cl.end.Sub(cl.start).Seconds(), Source: "local"}
		i3Rates(rr, false)
	}
	session.SumReceiver(&t.rcv, rr)
	st.Receiver = rr
	if cl.cfg.Bidir {
		st.Flow = "reverse"
	}
	t.recvStreams = append(t.recvStreams, st)
}

// sendSummary settles the send totals and returns the server's count of
// what we sent, from its results (nil when unknown), putting each
// stream's part into its send stream.
func (cl *i3Client) sendSummary(t *clientTotals) *result.Receiver {
	cfg, r, udp := cl.cfg, cl.r, cl.cfg.UDP
	var peerRcv *result.Receiver
	session.SettleWritten(&t.snd)
	t.snd.Seconds = t.last.Sub(t.first).Seconds()
	session.RateOf(&t.snd)
	if !udp {
		t.snd.PacketsPerSecond = 0
	}
	if cl.peer != nil {
		sum, per, lossWhole, err := i3PeerReceiver(cl.peer, t.sendIDs, udp, cfg.Omit, cl.omitted)
		if lossWhole {
			r.Warn(session.OmitLossWarning)
		}
		if err != nil {
			r.Warn("the server's results do not match our streams: " + err.Error())
		} else {
			peerRcv = sum
			for i, st := range t.sendStreams {
				st.Receiver = per[i]
			}
		}
	} else {
		r.Warn("no results came back from the iperf3 server: the receiver's counts are unknown")
	}
	if udp {
		session.WarnSender(r, cfg, &t.snd, 0, nil, 0)
	}
	return peerRcv
}

// place puts the totals into the result as the test's direction has them.
func (cl *i3Client) place(t *clientTotals, peerRcv *result.Receiver) {
	cfg, r := cl.cfg, cl.r
	switch {
	case cfg.Bidir:
		r.Sender, r.Receiver = &t.snd, peerRcv
		r.Reverse = &result.Flow{Direction: result.DirReceive, Receiver: &t.rcv}
	case cfg.Reverse:
		r.Receiver = &t.rcv
		if t.rcv.Bytes == 0 {
			r.Warn("the iperf3 server sent nothing back")
		}
	default:
		r.Sender, r.Receiver = &t.snd, peerRcv
	}
	if len(cl.streams) > 1 {
		for _, st := range append(t.sendStreams, t.recvStreams...) {
			r.Streams = append(r.Streams, *st)
		}
	}
}

// warnPeerShort says when the iperf3 server counted less than we sent
// (after -O took the omitted period out of both).
func warnPeerShort(r *result.Result, udp bool) {
	snd, sum := r.Sender, r.Receiver
	if snd == nil || sum == nil || sum.Source != "peer-report" {
		return
	}
	if udp && sum.Total < snd.Packets {
		r.Warn(fmt.Sprintf("the iperf3 server's count ends %d datagrams short of the %d we sent: iperf3 stops counting at TEST_END, which follows our last datagram at once (as from iperf3's own client), so datagrams it had not read by then are in neither its count nor its loss",
			snd.Packets-sum.Total, snd.Packets))
	}
	if !udp && sum.Bytes < snd.Bytes {
		r.Warn(fmt.Sprintf("the iperf3 server counted %d bytes fewer than we sent: iperf3 stops counting when the test ends, so data still in flight or unread then is not in its figure (TCP loses nothing; its receiver rate is understated by %.2f %%)",
			snd.Bytes-sum.Bytes, 100*float64(snd.Bytes-sum.Bytes)/float64(snd.Bytes)))
	}
}

// later returns the later of two times.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
