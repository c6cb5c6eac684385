package iperf3

import (
	"net"
	"net/netip"
	"runtime"
	"sort"
	"strconv"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/version"
	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

// report builds iperf3's -J document from the client test: our own
// per-stream counts, and the peer's for the other end of each stream.
//
// What wirebench does not measure is left out where iperf3's format allows
// (retransmits, cwnd and rtt where the system has no TCP_INFO, socket
// buffer sizes) and is zero where it does not; the host's CPU use is this
// process's over the test (cpuuse), the remote CPU figures are the peer's own.
// "socket" numbers are labels (stream index + 5, as iperf3's first data
// socket usually is), not file descriptors.
func (cl *i3Client) report() *i3wire.Report {
	cfg := cl.cfg
	rep := &i3wire.Report{Intervals: []i3wire.ReportInterval{}}
	proto := "TCP"
	if cfg.UDP {
		proto = "UDP"
	}
	st := &rep.Start
	st.Version = "wirebench " + version.String()
	st.SystemInfo = runtime.GOOS + " " + runtime.GOARCH
	st.Timestamp = i3wire.ReportTimestamp{Time: cl.start.UTC().Format(time.RFC1123), TimeSecs: cl.start.Unix()}
	st.ConnectingTo = &i3wire.ReportHostPort{Host: cfg.Host, Port: int64(cfg.Port)}
	st.Cookie = cl.cookie.String()
	st.Connected = []i3wire.ReportConnection{}
	if cl.params != nil {
		rate := cl.params.Bandwidth
		st.TargetBitrate = &rate
		ts := &i3wire.ReportTestStart{Protocol: proto, NumStreams: int64(cfg.Parallel), BlkSize: int64(cfg.Length),
			Duration: cl.params.Time, Bytes: cl.params.Num, TargetBitrate: rate, Omit: cl.params.Omit}
		if cfg.Reverse {
			ts.Reverse = 1
		}
		if cfg.Bidir {
			one := int64(1)
			ts.Bidir = &one
		}
		st.TestStart = ts
	}
	for k, s := range cl.streams {
		c := i3wire.ReportConnection{Socket: int64(k + 5)}
		var la, ra string
		if s.tcp != nil {
			la, ra = s.tcp.LocalAddr().String(), s.tcp.RemoteAddr().String()
		} else if s.udp != nil {
			la, ra = s.udp.LocalAddr().String(), s.udp.RemoteAddr().String()
		}
		c.LocalHost, c.LocalPort = splitHostPort(la)
		c.RemoteHost, c.RemotePort = splitHostPort(ra)
		st.Connected = append(st.Connected, c)
	}
	rep.Intervals = cl.reportIntervals()
	cl.reportEnd(&rep.End)
	if cl.peer != nil {
		rep.ServerOutputText = cl.peer.ServerOutputText
		rep.ServerOutputJSON = cl.peer.ServerOutputJSON
	}
	if cl.r.Error != "" {
		rep.Error = cl.r.Error
	}
	return rep
}

func splitHostPort(a string) (string, int64) {
	ap, err := netip.ParseAddrPort(a)
	if err != nil {
		h, p, _ := net.SplitHostPort(a)
		n, _ := strconv.ParseInt(p, 10, 64)
		return h, n
	}
	return ap.Addr().Unmap().String(), int64(ap.Port())
}

// summary is one ReportSummary over [start, end] seconds.
func summary(start, end float64, bytes int64, sender bool) i3wire.ReportSummary {
	s := i3wire.ReportSummary{Start: start, End: end, Seconds: end - start, Bytes: bytes, Sender: sender}
	if s.Seconds > 0 {
		s.BitsPerSecond = float64(bytes) * 8 / s.Seconds
	}
	return s
}

func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }
func boolp(v bool) *bool     { return &v }
func pct(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// reportIntervals turns our per-stream intervals into iperf3's.
func (cl *i3Client) reportIntervals() []i3wire.ReportInterval {
	type key struct{ s, e float64 }
	by := map[key][]result.Interval{}
	var keys []key
	for _, in := range cl.perIv {
		k := key{in.Start, in.End}
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], in)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].s < keys[j].s })
	send := map[string]bool{}
	sock := map[string]int64{}
	for k, s := range cl.streams {
		id := strconv.FormatInt(s.id, 10)
		send[id], sock[id] = s.send, int64(k+5)
	}
	out := []i3wire.ReportInterval{}
	for _, k := range keys {
		ri := i3wire.ReportInterval{Streams: []i3wire.ReportSummary{}}
		var fwd, rev *i3wire.ReportSummary
		for _, in := range by[k] {
			sm := summary(in.Start, in.End, in.Bytes, send[in.Flow])
			sm.Socket = i64(sock[in.Flow])
			if cl.cfg.UDP {
				sm.Packets = i64(in.Packets)
				if !sm.Sender {
					sm.JitterMs, sm.LostPackets = f64(in.JitterMS), i64(in.Lost)
					sm.LostPercent = f64(pct(in.Lost, in.Packets+in.Lost))
				}
			}
			if t := in.TCP; t != nil && sm.Sender && !cl.cfg.UDP {
				// iperf3's sender fields (Linux): cwnd in bytes, RTTs in µs.
				sm.Retransmits, sm.SndCwnd, sm.RTT, sm.RTTVar = i64(t.Retransmits), i64(t.CwndBytes), i64(t.RTTMicros), i64(t.RTTVarMicros)
				sm.PMTU = i64(int64(t.PMTU))
			}
			sm.Omitted = boolp(in.Omitted)
			ri.Streams = append(ri.Streams, sm)
			agg := &fwd
			if cl.cfg.Bidir && !sm.Sender {
				agg = &rev
			}
			if *agg == nil {
				c := sm.Clone()
				c.Socket, c.SndCwnd, c.RTT, c.RTTVar, c.PMTU = nil, nil, nil, nil, nil
				*agg = &c
			} else {
				if sm.Retransmits != nil && (*agg).Retransmits != nil {
					*(*agg).Retransmits += *sm.Retransmits
				}
				(*agg).Bytes += sm.Bytes
				(*agg).BitsPerSecond += sm.BitsPerSecond
				if sm.Packets != nil {
					*(*agg).Packets += *sm.Packets
				}
				if sm.LostPackets != nil {
					*(*agg).LostPackets += *sm.LostPackets
				}
			}
		}
		for _, a := range []*i3wire.ReportSummary{fwd, rev} {
			if a != nil && a.LostPackets != nil && a.Packets != nil {
				a.LostPercent = f64(pct(*a.LostPackets, *a.Packets+*a.LostPackets))
			}
		}
		ri.Sum, ri.SumBidirReverse = fwd, rev
		out = append(out, ri)
	}
	return out
}

// reportEnd fills the end section: per stream, the sender and receiver
// figures of both ends; then the sums.
func (cl *i3Client) reportEnd(end *i3wire.ReportEnd) {
	udp := cl.cfg.UDP
	dur := cl.end.Sub(cl.start).Seconds()
	var sent, recv, sentRev, recvRev *i3wire.ReportSummary
	add := func(dst **i3wire.ReportSummary, s i3wire.ReportSummary) {
		s = s.Clone()
		s.Socket = nil
		if *dst == nil {
			*dst = &s
			return
		}
		d := *dst
		d.Bytes += s.Bytes
		d.End, d.Seconds = max(d.End, s.End), max(d.Seconds, s.Seconds)
		if d.Seconds > 0 {
			d.BitsPerSecond = float64(d.Bytes) * 8 / d.Seconds
		}
		if s.Packets != nil && d.Packets != nil {
			*d.Packets += *s.Packets
		}
		if s.LostPackets != nil && d.LostPackets != nil {
			*d.LostPackets += *s.LostPackets
		}
		if s.JitterMs != nil && d.JitterMs != nil {
			*d.JitterMs = max(*d.JitterMs, *s.JitterMs)
		}
		if d.LostPackets != nil && d.Packets != nil {
			d.LostPercent = f64(pct(*d.LostPackets, *d.Packets))
		}
	}
	for k, s := range cl.streams {
		ours := i3wire.StreamResult{ID: s.id}
		if cl.sent != nil {
			if r := cl.sent.Stream(s.id); r != nil {
				ours = *r
			}
		}
		var theirs *i3wire.StreamResult
		if cl.peer != nil {
			theirs = cl.peer.Stream(s.id)
		}
		sndR, rcvR := &ours, theirs
		if !s.send {
			sndR, rcvR = theirs, &ours
		}
		mk := func(r *i3wire.StreamResult, sender bool) i3wire.ReportSummary {
			if r == nil {
				return summary(0, dur, 0, sender)
			}
			e := r.EndTime
			if e <= 0 {
				e = dur
			}
			sm := summary(0, e, r.Bytes, sender)
			sm.Socket = i64(int64(k + 5))
			if udp {
				sm.Packets = i64(r.Packets)
				sm.JitterMs, sm.LostPackets = f64(r.Jitter*1000), i64(r.Errors)
				sm.LostPercent = f64(pct(r.Errors, r.Packets))
			} else if sender && r.Retransmits >= 0 {
				sm.Retransmits = i64(r.Retransmits)
			}
			return sm
		}
		snd, rcv := mk(sndR, true), mk(rcvR, false)
		if udp {
			u := rcv.Clone()
			u.Sender = s.send
			u.OutOfOrder = i64(s.totals.ooo)
			end.Streams = append(end.Streams, i3wire.ReportEndStream{UDP: &u})
		} else {
			end.Streams = append(end.Streams, i3wire.ReportEndStream{Sender: &snd, Receiver: &rcv})
		}
		if cl.cfg.Bidir && !s.send {
			add(&sentRev, snd)
			add(&recvRev, rcv)
		} else {
			add(&sent, snd)
			add(&recv, rcv)
		}
	}
	end.SumSent, end.SumReceived = sent, recv
	end.SumSentBidirReverse, end.SumReceivedBidirReverse = sentRev, recvRev
	if udp && recv != nil {
		s := recv.Clone()
		end.Sum = &s
		if recvRev != nil {
			r := recvRev.Clone()
			end.SumBidirReverse = &r
		}
	}
	cpu := &i3wire.ReportCPU{}
	if c := cl.r.CPU; c != nil {
		cpu.HostTotal, cpu.HostUser, cpu.HostSystem = c.Percent, c.UserPercent, c.SystemPercent
	}
	if cl.peer != nil {
		cpu.RemoteTotal, cpu.RemoteUser, cpu.RemoteSystem = cl.peer.CPUUtilTotal, cl.peer.CPUUtilUser, cl.peer.CPUUtilSystem
	}
	end.CPUUtilizationPercent = cpu
}
