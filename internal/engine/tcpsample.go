package engine

import (
	"net"
	"syscall"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/tcpinfo"
)

// TCPFigures sums TCP_INFO readings of a flow's streams (result.TCPInfo
// Merge); retransmits are the connections' lifetime totals. nil for none.
func TCPFigures(infos ...tcpinfo.Info) *result.TCPInfo {
	if len(infos) == 0 {
		return nil
	}
	var f result.TCPInfo
	for _, i := range infos {
		f.Merge(&result.TCPInfo{
			Retransmits: int64(i.TotalRetrans), CwndBytes: int64(i.Cwnd) * int64(i.SndMSS),
			RTTMicros: i.RTT.Microseconds(), RTTVarMicros: i.RTTVar.Microseconds(),
			MSS: int(i.SndMSS), PMTU: int(i.PMTU),
		})
	}
	return &f
}

// sampleTCP reads TCP_INFO of the connections that still answer; nil when
// none does (no TCP_INFO here, or all closed). Its Retransmits are those
// each connection added since prev, its lifetime count at the last sample
// (one per connection, updated): a connection that stops answering then
// takes only its own count out, not the others' since the last report.
func sampleTCP(conns []net.Conn, prev []int64) *result.TCPInfo {
	var infos []tcpinfo.Info
	var retr int64
	for k, c := range conns {
		sc, ok := c.(syscall.Conn)
		if !ok {
			continue
		}
		if i, err := tcpinfo.Read(sc); err == nil {
			infos = append(infos, i)
			total := int64(i.TotalRetrans)
			retr += max(total-prev[k], 0)
			prev[k] = max(total, prev[k])
		}
	}
	t := TCPFigures(infos...)
	if t != nil {
		t.Retransmits = retr
	}
	return t
}
