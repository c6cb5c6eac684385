package pscheduler

import (
	"strings"

	"github.com/wirebench/wirebench/internal/result"
)

// convert turns a wirebench result into pScheduler's throughput result,
// renaming as the iperf3 tool does: throughput-bits is bit/s,
// throughput-bytes the bytes of the interval, jitter in ms, rtt in µs,
// sent and lost in datagrams. Figures wirebench did not measure are left
// out. Intervals carry one stream entry when the test had one stream;
// with several, wirebench keeps per-stream figures for the whole test
// only, so the intervals' stream lists are empty.
func convert(r *result.Result, diags string) ThroughputResult {
	out := ThroughputResult{Succeeded: r.Error == "", Error: r.Error, Intervals: []ThroughputInterval{}}
	lines := []string{diags}
	if len(r.Warnings) > 0 {
		lines = append(lines, "warnings:\n"+strings.Join(r.Warnings, "\n"))
	}
	out.Diags = strings.Join(lines, "\n\n")
	udp := r.Test.Protocol == result.UDP
	for _, in := range r.Intervals {
		if in.Flow == "reverse" {
			continue
		}
		d := intervalData(in, udp)
		ti := ThroughputInterval{Streams: []ThroughputData{}, Summary: d}
		if r.Test.Streams <= 1 {
			one := d
			one.StreamID = intPtr(1)
			ti.Streams = append(ti.Streams, one)
		}
		out.Intervals = append(out.Intervals, ti)
	}
	sum := summaryData(r.Sender, r.Receiver, udp)
	if sum == nil {
		if out.Succeeded {
			out.Succeeded = false
			out.Error = "the test measured nothing"
		}
		return out
	}
	out.Summary.Summary = sum
	if len(r.Streams) > 0 {
		for _, st := range r.Streams {
			if st.Flow != "" {
				continue
			}
			if d := summaryData(st.Sender, st.Receiver, udp); d != nil {
				d.StreamID = intPtr(st.ID)
				out.Summary.Streams = append(out.Summary.Streams, *d)
			}
		}
	} else {
		one := *sum
		one.StreamID = intPtr(1)
		out.Summary.Streams = []ThroughputData{one}
	}
	if r.Sender != nil && r.Sender.TCP != nil && r.Sender.TCP.MSS > 0 {
		out.MSS = r.Sender.TCP.MSS
	}
	return out
}

// intervalData renames one interval.
func intervalData(in result.Interval, udp bool) ThroughputData {
	d := ThroughputData{Start: in.Start, End: in.End, ThroughputBits: in.BitsPerSecond, ThroughputBytes: floatPtr(float64(in.Bytes))}
	omitted := in.Omitted
	d.Omitted = &omitted
	if udp {
		d.Sent = int64Ptr(in.Packets)
		if in.MeasuredBy != result.MeasuredBySender {
			d.Lost = int64Ptr(in.Lost)
			d.Jitter = floatPtr(in.JitterMS)
		}
	}
	if in.TCP != nil {
		d.Retransmits = int64Ptr(in.TCP.Retransmits)
		d.TCPWindowSize = int64Ptr(in.TCP.CwndBytes)
		d.RTT = floatPtr(float64(in.TCP.RTTMicros))
	}
	return d
}

// summaryData is the whole-test figures: throughput-bits the sender's rate
// (the receiver's where only it is known), receiver-throughput-bits the
// receiver's; for UDP, sent, lost and jitter as the receiver counted
// them. nil when neither side's figures are known.
func summaryData(snd *result.Sender, rcv *result.Receiver, udp bool) *ThroughputData {
	if snd == nil && rcv == nil {
		return nil
	}
	d := &ThroughputData{}
	if snd != nil {
		d.End, d.ThroughputBits, d.ThroughputBytes = snd.Seconds, snd.BitsPerSecond, floatPtr(float64(snd.Bytes))
		if snd.TCP != nil {
			d.Retransmits = int64Ptr(snd.TCP.Retransmits)
			d.TCPWindowSize = int64Ptr(snd.TCP.CwndBytes)
			d.RTT = floatPtr(float64(snd.TCP.RTTMicros))
		}
		if udp {
			d.Sent = int64Ptr(snd.Packets)
		}
	}
	if rcv != nil {
		d.ReceiverThroughputBits = floatPtr(rcv.BitsPerSecond)
		if snd == nil {
			d.End, d.ThroughputBits, d.ThroughputBytes = rcv.Seconds, rcv.BitsPerSecond, floatPtr(float64(rcv.Bytes))
		}
		if udp {
			d.Lost = int64Ptr(rcv.Lost)
			d.Jitter = floatPtr(rcv.JitterMS)
			if d.Sent == nil && rcv.Total > 0 {
				d.Sent = int64Ptr(rcv.Total)
			} else if d.Sent == nil {
				d.Sent = int64Ptr(rcv.Packets + rcv.Lost)
			}
		}
	}
	return d
}

func intPtr(v int) *int           { return &v }
func int64Ptr(v int64) *int64     { return &v }
func floatPtr(v float64) *float64 { return &v }
