package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// The UDP -P rows: the rate offered is split over the streams, and the
// server's figures are summed over them: datagrams/s (each stream's count
// over its own time: the streams run at once, so their rates add up),
// received, lost and expected datagrams.

// ParallelUDP is how many streams the UDP -P rows use.
const ParallelUDP = 2

// wbServerDocs reads the wirebench/1 documents a server (without -1)
// printed, one per line; a line that is not one is skipped.
func wbServerDocs(out []byte) []wbDoc {
	var docs []wbDoc
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 1<<16), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var d wbDoc
		if json.Unmarshal(line, &d) == nil && d.Schema == "wirebench/1" && d.Role == "server" {
			docs = append(docs, d)
		}
	}
	return docs
}

// wbStreamsCovered is how many streams the server's documents so far
// cover: a group's result covers its streams, any other one stream.
func wbStreamsCovered(out []byte) int {
	n := 0
	for _, d := range wbServerDocs(out) {
		n += max(len(d.Streams), 1)
	}
	return n
}

// parseWirebenchStreams reads a wirebench UDP test of n streams: the
// client's --json (its sender figures are the sum over its streams) and
// the server's results, one per stream or one for the group (with each
// stream's receiver), summed.
func parseWirebenchStreams(client, server []byte, n int) (Counts, error) {
	c, err := wirebenchSent(client)
	if err != nil {
		return Counts{}, err
	}
	var rs []wbReceiver
	for _, d := range wbServerDocs(server) {
		if d.Error != "" {
			return c, fmt.Errorf("wirebench server: %s", d.Error)
		}
		if len(d.Streams) == 0 {
			rs = append(rs, d.Receiver)
		}
		for _, s := range d.Streams {
			rs = append(rs, s.Receiver)
		}
	}
	if len(rs) != n {
		return c, fmt.Errorf("wirebench server: results of %d streams, want %d", len(rs), n)
	}
	for _, r := range rs {
		if r == nil || r.Source != "local" {
			return c, errors.New("wirebench server: a stream without receiver counts of its own")
		}
		c.addStream(r.Packets, r.Lost, max(r.Total, r.Packets+r.Lost), r.Bytes, r.Seconds, r.BitsPerSecond)
	}
	return c, nil
}

// addStream adds one stream's server figures.
func (c *Counts) addStream(received, lost, expected, bytes int64, seconds, bps float64) {
	c.Received += received
	c.Lost += lost
	c.Expected += expected
	c.RecvBytes += bytes
	c.RecvBPS += bps
	c.RecvSeconds = max(c.RecvSeconds, seconds)
	if seconds > 0 {
		c.StreamsPPS += float64(received) / seconds
	}
}

// parseIperf2UDPStreams reads an iperf 2 UDP test of n streams: the
// client's CSV lines (each stream's sent bytes; length is the datagram
// size) and the server's (each stream's received and lost), summed.
func parseIperf2UDPStreams(client, server []byte, length, n int) (Counts, error) {
	cl, sv, err := parseIperf2Pair(client, server)
	if err != nil {
		return Counts{}, err
	}
	var c Counts
	for _, l := range cl {
		if l.ID < 0 {
			continue // a sum line: summed here
		}
		c.Sent += l.Bytes / int64(length)
		c.SentSeconds = max(c.SentSeconds, l.Seconds())
	}
	if c.SentSeconds > 0 {
		c.SentPPS = float64(c.Sent) / c.SentSeconds
	}
	streams := 0
	for _, l := range sv {
		if l.ID < 0 || !l.UDP || l.Total < 0 {
			continue
		}
		streams++
		c.addStream(max(l.Total-l.Lost, 0), l.Lost, l.Total, l.Bytes, l.Seconds(), l.BPS)
	}
	if streams != n {
		return c, fmt.Errorf("iperf server: reports of %d streams, want %d", streams, n)
	}
	return c, nil
}
