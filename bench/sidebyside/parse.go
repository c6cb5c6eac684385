package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Counts are what one tool reported of one test: the client's send figures
// and the server's receive figures. A field a tool did not report is 0.
type Counts struct {
	Sent        int64   // datagrams the client sent (UDP)
	SentSeconds float64 // the client's send time
	SentPPS     float64 // the client's datagrams/s
	Received    int64   // datagrams the server counted (UDP)
	Lost        int64   // datagrams the server counted lost (UDP)
	Expected    int64   // datagrams the server expected (received + lost)
	RecvBytes   int64   // payload the server received
	RecvSeconds float64 // the server's test time
	RecvBPS     float64 // the server's goodput, bit/s
	// StreamsPPS, for several UDP streams, is the sum of each stream's
	// received datagrams/s (streams.go); 0 for one stream.
	StreamsPPS float64
}

// RecvPPS is the server's datagrams per second (summed over streams).
func (c Counts) RecvPPS() float64 {
	if c.StreamsPPS > 0 {
		return c.StreamsPPS
	}
	if c.RecvSeconds <= 0 {
		return 0
	}
	return float64(c.Received) / c.RecvSeconds
}

// Loss is the server's loss as a share of what it expected.
func (c Counts) Loss() float64 {
	if c.Expected <= 0 {
		return 0
	}
	return float64(c.Lost) / float64(c.Expected)
}

// wbDoc is the part of a wirebench/1 test document the bench reads.
type wbDoc struct {
	Schema string `json:"schema"`
	Role   string `json:"role"`
	Sender *struct {
		Packets          int64   `json:"packets"`
		Seconds          float64 `json:"seconds"`
		PacketsPerSecond float64 `json:"packets_per_second"`
	} `json:"sender"`
	Receiver wbReceiver `json:"receiver"`
	// Streams are a group's streams (a server's result of -P).
	Streams []struct {
		Receiver wbReceiver `json:"receiver"`
	} `json:"streams"`
	Error string `json:"error"`
}

// wbReceiver is the part of a wirebench/1 receiver the bench reads.
type wbReceiver *struct {
	Bytes         int64   `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	Packets       int64   `json:"packets"`
	Lost          int64   `json:"lost"`
	Total         int64   `json:"total"`
	Seconds       float64 `json:"seconds"`
	Source        string  `json:"source"`
}

// readWBDoc reads one wirebench/1 test document of the role given.
func readWBDoc(out []byte, role string) (wbDoc, error) {
	var d wbDoc
	if err := json.Unmarshal(bytes.TrimSpace(out), &d); err != nil {
		return d, fmt.Errorf("reading wirebench %s --json: %w", role, err)
	}
	switch {
	case d.Schema != "wirebench/1":
		return d, fmt.Errorf("wirebench %s --json: schema %q, want wirebench/1", role, d.Schema)
	case d.Role != role:
		return d, fmt.Errorf("wirebench --json: a %q document, want the %s's", d.Role, role)
	case d.Error != "":
		return d, fmt.Errorf("wirebench %s: %s", role, d.Error)
	}
	return d, nil
}

// parseWirebench reads a wirebench test from both ends: the client's
// --json (what it sent) and the server's (-1 --json: what it received, by
// its own count and clock, not the iperf-format report the client gets).
func parseWirebench(client, server []byte) (Counts, error) {
	c, err := wirebenchSent(client)
	if err != nil {
		return Counts{}, err
	}
	sd, err := readWBDoc(server, "server")
	if err != nil {
		return Counts{}, err
	}
	r := sd.Receiver
	if r == nil || r.Source != "local" {
		return c, errors.New("wirebench server: no receiver counts of its own")
	}
	c.Received, c.Lost, c.RecvBytes, c.RecvSeconds, c.RecvBPS = r.Packets, r.Lost, r.Bytes, r.Seconds, r.BitsPerSecond
	c.Expected = r.Total
	if c.Expected == 0 {
		c.Expected = r.Packets + r.Lost
	}
	return c, nil
}

// iperf3Sum is one of the sums in iperf3's -J "end".
type iperf3Sum struct {
	Seconds       float64 `json:"seconds"`
	Bytes         int64   `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	Packets       int64   `json:"packets"`
	LostPackets   int64   `json:"lost_packets"`
}

// parseIperf3 reads `iperf3 -c -J`: the client's sent sums, and the
// server's received sums it got in the results exchange.
func parseIperf3(out []byte, udp bool) (Counts, error) {
	var d struct {
		End struct {
			SumSent     *iperf3Sum `json:"sum_sent"`
			SumReceived *iperf3Sum `json:"sum_received"`
		} `json:"end"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(out, &d); err != nil {
		return Counts{}, fmt.Errorf("reading iperf3 -J: %w", err)
	}
	if d.Error != "" {
		return Counts{}, fmt.Errorf("iperf3: %s", d.Error)
	}
	s, r := d.End.SumSent, d.End.SumReceived
	if s == nil || r == nil {
		return Counts{}, errors.New("iperf3 -J: no sum_sent/sum_received")
	}
	c := Counts{SentSeconds: s.Seconds, RecvBytes: r.Bytes, RecvSeconds: r.Seconds, RecvBPS: r.BitsPerSecond}
	if udp {
		// iperf3's receiver "packets" is what it expected: the highest
		// sequence number, the lost ones included.
		c.Sent, c.Expected, c.Lost = s.Packets, r.Packets, r.LostPackets
		c.Received = max(r.Packets-r.LostPackets, 0)
		if s.Seconds > 0 {
			c.SentPPS = float64(s.Packets) / s.Seconds
		}
	}
	return c, nil
}

// iperf2Line is one line of iperf 2's CSV report (-y C).
type iperf2Line struct {
	// ID is the stream's number; -1 marks a sum over streams.
	ID    int64
	Bytes int64
	BPS   float64
	// UDP server lines only (14 fields):
	UDP          bool
	Lost, Total  int64
	OutOfOrder   int64
	JitterMillis float64
}

// Seconds is the line's time, from its bytes and rate (the interval
// field has one decimal only).
func (l iperf2Line) Seconds() float64 {
	if l.BPS <= 0 {
		return 0
	}
	return float64(l.Bytes) * 8 / l.BPS
}

// parseIperf2CSV reads iperf 2's -y C lines: timestamp, source address
// and port, destination address and port, id, interval, bytes, bit/s,
// and for UDP jitter, lost, total, loss %, out-of-order. Lines that are
// not reports are an error: iperf 2 prints its warnings on stderr.
func parseIperf2CSV(out []byte) ([]iperf2Line, error) {
	r := csv.NewReader(bytes.NewReader(out))
	r.FieldsPerRecord = -1
	var lines []iperf2Line
	for {
		f, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading iperf CSV: %w", err)
		}
		if len(f) == 1 && strings.TrimSpace(f[0]) == "" {
			continue
		}
		if len(f) != 9 && len(f) != 14 {
			return nil, fmt.Errorf("iperf CSV line with %d fields, want 9 (TCP) or 14 (UDP): %q", len(f), strings.Join(f, ","))
		}
		var l iperf2Line
		var perr error
		num := func(s string) int64 {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil && perr == nil {
				perr = err
			}
			return v
		}
		flt := func(s string) float64 {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil && perr == nil {
				perr = err
			}
			return v
		}
		l.ID, l.Bytes, l.BPS = num(f[5]), num(f[7]), flt(f[8])
		if len(f) == 14 {
			l.UDP = true
			l.JitterMillis, l.Lost, l.Total, l.OutOfOrder = flt(f[9]), num(f[10]), num(f[11]), num(f[13])
		}
		if perr != nil {
			return nil, fmt.Errorf("iperf CSV line %q: %w", strings.Join(f, ","), perr)
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		return nil, errors.New("iperf printed no CSV report")
	}
	return lines, nil
}

// parseIperf2UDP reads an iperf 2 UDP test: the client's CSV line (its
// sent bytes; length is the datagram size) and the server's (what it
// received and lost).
func parseIperf2UDP(client, server []byte, length int) (Counts, error) {
	cl, sv, err := parseIperf2Pair(client, server)
	if err != nil {
		return Counts{}, err
	}
	c0, s := cl[0], sv[len(sv)-1]
	if !s.UDP || s.Total < 0 {
		return Counts{}, errors.New("iperf server: no UDP report")
	}
	c := Counts{Sent: c0.Bytes / int64(length), SentSeconds: c0.Seconds()}
	if c.SentSeconds > 0 {
		c.SentPPS = float64(c.Sent) / c.SentSeconds
	}
	c.Expected, c.Lost = s.Total, s.Lost
	c.Received = max(s.Total-s.Lost, 0)
	c.RecvBytes, c.RecvSeconds, c.RecvBPS = s.Bytes, s.Seconds(), s.BPS
	return c, nil
}

// parseIperf2TCP reads an iperf 2 TCP server's CSV: one line per stream,
// summed (2.1.8 prints no SUM line in CSV); the streams run at once, so
// their rates add up and the time is the longest stream's.
func parseIperf2TCP(server []byte) (Counts, error) {
	sv, err := parseIperf2CSV(server)
	if err != nil {
		return Counts{}, fmt.Errorf("server: %w", err)
	}
	var c Counts
	for _, l := range sv {
		if l.ID < 0 {
			continue // a sum line (iperf 2 prints one in some versions): the streams are summed here
		}
		c.RecvBytes += l.Bytes
		c.RecvBPS += l.BPS
		c.RecvSeconds = max(c.RecvSeconds, l.Seconds())
	}
	return c, nil
}

// wirebenchSent reads what a wirebench client's --json says it sent (the
// sum over its streams).
func wirebenchSent(client []byte) (Counts, error) {
	cd, err := readWBDoc(client, "client")
	if err != nil {
		return Counts{}, err
	}
	var c Counts
	if s := cd.Sender; s != nil {
		c.Sent, c.SentSeconds, c.SentPPS = s.Packets, s.Seconds, s.PacketsPerSecond
	}
	return c, nil
}

// parseIperf2Pair reads the CSV lines of an iperf 2 client and its server.
func parseIperf2Pair(client, server []byte) (cl, sv []iperf2Line, err error) {
	if cl, err = parseIperf2CSV(client); err != nil {
		return nil, nil, fmt.Errorf("client: %w", err)
	}
	if sv, err = parseIperf2CSV(server); err != nil {
		return nil, nil, fmt.Errorf("server: %w", err)
	}
	return cl, sv, nil
}
