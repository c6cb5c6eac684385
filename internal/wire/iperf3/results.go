package iperf3

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ErrBadResults is wrapped by every results decoding error.
var ErrBadResults = errors.New("bad iperf3 results")

// Results is the JSON each side sends after EXCHANGE_RESULTS, the client first
// (wire-protocols.md §4.3).
//
// Decoding is tolerant about number syntax: integers, floats, and integers in
// [2^63, 2^64) which are taken as int64 wrap-around (3.12 and 3.13 send −1 as
// 18446744073709551615). It is strict where iperf3 is strict: the cpu_util_*
// keys, sender_has_retransmits, streams and, per stream, id, bytes,
// retransmits, jitter, errors and packets must be present and be numbers, and
// omitted_errors / omitted_packets come as a pair or not at all. Unknown keys
// are ignored.
type Results struct {
	CPUUtilTotal         float64 // "cpu_util_total", percent
	CPUUtilUser          float64 // "cpu_util_user", percent
	CPUUtilSystem        float64 // "cpu_util_system", percent
	SenderHasRetransmits int64   // "sender_has_retransmits": 1, 0, or −1 (unknown)
	CongestionUsed       string  // "congestion_used", optional
	// ServerOutputText is the server's human report ("server_output_text"),
	// sent by a server when the client asked get_server_output without -J.
	ServerOutputText string
	// ServerOutputJSON is the server's whole -J report ("server_output_json"),
	// sent when the client asked get_server_output with -J. It decodes into
	// a Report.
	ServerOutputJSON json.RawMessage
	Streams          []StreamResult // "streams"

	// WB is the wirebench extension (keys "wb_*"); nil from plain iperf3.
	WB *WBResults
}

// StreamResult is one element of "streams". For UDP, a sender reports
// Packets = datagrams sent and Errors = 0; a receiver reports Packets = the
// highest sequence number seen and Errors = lost (net of out-of-order).
type StreamResult struct {
	ID          int64          // "id": 1, 3, 4, 5, … (2 is never used)
	Bytes       int64          // "bytes"
	Retransmits int64          // "retransmits", −1 when unknown
	Jitter      float64        // "jitter", seconds
	Errors      int64          // "errors": lost datagrams
	Packets     int64          // "packets"
	Omitted     *OmittedCounts // "omitted_errors" + "omitted_packets" (3.14+), nil when absent
	StartTime   float64        // "start_time", seconds from the test start
	EndTime     float64        // "end_time", seconds from the test start
}

// OmittedCounts are the UDP counts during the --omit period (3.14+).
type OmittedCounts struct {
	Errors  int64 // "omitted_errors"
	Packets int64 // "omitted_packets"
}

// WBResults is the wirebench extension of the results: what a wirebench
// receiver measured beyond iperf3's counters. iperf3 ignores its keys.
type WBResults struct {
	Version int64      `json:"wb_version"`
	Agent   string     `json:"wb_agent,omitempty"`
	Streams []WBStream `json:"wb_streams"`
}

// WBStream is the extension data of one stream, as measured by its receiver.
type WBStream struct {
	ID         int64        `json:"id"`
	Duplicates int64        `json:"dups"`
	OutOfOrder int64        `json:"ooo"`
	Intervals  []WBInterval `json:"intervals,omitempty"`
	Latency    *WBLatency   `json:"latency,omitempty"`
}

// WBInterval is one receiver interval of a stream.
type WBInterval struct {
	Start      float64 `json:"start"` // seconds from the test start
	End        float64 `json:"end"`
	Bytes      int64   `json:"bytes"`
	Packets    int64   `json:"packets"`
	Lost       int64   `json:"lost"`
	Duplicates int64   `json:"dups"`
	OutOfOrder int64   `json:"ooo"`
}

// WBLatency summarises one-way latency in microseconds (sender timestamp to
// receiver clock; meaningful only with synchronised clocks or on one host).
type WBLatency struct {
	Count  int64   `json:"count"`
	MinUs  float64 `json:"min_us"`
	MeanUs float64 `json:"mean_us"`
	MaxUs  float64 `json:"max_us"`
	P50Us  float64 `json:"p50_us"`
	P99Us  float64 `json:"p99_us"`
}

// resultsWire fixes key names and order for encoding.
type resultsWire struct {
	CPUUtilTotal         float64         `json:"cpu_util_total"`
	CPUUtilUser          float64         `json:"cpu_util_user"`
	CPUUtilSystem        float64         `json:"cpu_util_system"`
	SenderHasRetransmits int64           `json:"sender_has_retransmits"`
	CongestionUsed       string          `json:"congestion_used,omitempty"`
	ServerOutputJSON     json.RawMessage `json:"server_output_json,omitempty"`
	ServerOutputText     string          `json:"server_output_text,omitempty"`
	Streams              []streamWire    `json:"streams"`
	WBVersion            int64           `json:"wb_version,omitempty"`
	WBAgent              string          `json:"wb_agent,omitempty"`
	WBStreams            []WBStream      `json:"wb_streams,omitempty"`
}

type streamWire struct {
	ID             int64   `json:"id"`
	Bytes          int64   `json:"bytes"`
	Retransmits    int64   `json:"retransmits"`
	Jitter         float64 `json:"jitter"`
	Errors         int64   `json:"errors"`
	OmittedErrors  *int64  `json:"omitted_errors,omitempty"`
	Packets        int64   `json:"packets"`
	OmittedPackets *int64  `json:"omitted_packets,omitempty"`
	StartTime      float64 `json:"start_time"`
	EndTime        float64 `json:"end_time"`
}

// MarshalJSON encodes r in iperf3's key order. −1 is written as -1 (as iperf3
// ≤ 3.11 and ≥ 3.14 do), and the omitted counts as a pair.
func (r *Results) MarshalJSON() ([]byte, error) {
	w := resultsWire{
		CPUUtilTotal: r.CPUUtilTotal, CPUUtilUser: r.CPUUtilUser, CPUUtilSystem: r.CPUUtilSystem,
		SenderHasRetransmits: r.SenderHasRetransmits, CongestionUsed: r.CongestionUsed,
		ServerOutputJSON: r.ServerOutputJSON, ServerOutputText: r.ServerOutputText,
		Streams: make([]streamWire, len(r.Streams)),
	}
	for i, s := range r.Streams {
		w.Streams[i] = streamWire{
			ID: s.ID, Bytes: s.Bytes, Retransmits: s.Retransmits, Jitter: s.Jitter,
			Errors: s.Errors, Packets: s.Packets, StartTime: s.StartTime, EndTime: s.EndTime,
		}
		if s.Omitted != nil {
			oe, op := s.Omitted.Errors, s.Omitted.Packets
			w.Streams[i].OmittedErrors, w.Streams[i].OmittedPackets = &oe, &op
		}
	}
	if r.WB != nil {
		w.WBVersion = max(r.WB.Version, 1)
		w.WBAgent = r.WB.Agent
		w.WBStreams = r.WB.Streams
		if w.WBStreams == nil {
			w.WBStreams = []WBStream{}
		}
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("encoding iperf3 results: %w", err)
	}
	return b, nil
}

// DecodeResults decodes a results JSON body (see Results for the rules).
func DecodeResults(body []byte) (*Results, error) {
	r, err := decodeResults(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadResults, err)
	}
	return r, nil
}

func decodeResults(body []byte) (*Results, error) {
	m, err := objectFields(body)
	if err != nil {
		return nil, err
	}
	f := &fieldReader{m: m}
	r := &Results{
		CPUUtilTotal:         f.mustFloat64("cpu_util_total"),
		CPUUtilUser:          f.mustFloat64("cpu_util_user"),
		CPUUtilSystem:        f.mustFloat64("cpu_util_system"),
		SenderHasRetransmits: f.mustInt64("sender_has_retransmits"),
		CongestionUsed:       f.string("congestion_used"),
		ServerOutputText:     f.string("server_output_text"),
	}
	if raw, ok := m["server_output_json"]; ok && string(raw) != "null" {
		r.ServerOutputJSON = append(json.RawMessage(nil), raw...)
	}
	if f.err != nil {
		return nil, f.err
	}
	raw, ok := m["streams"]
	if !ok {
		return nil, fmt.Errorf("key %q: %w", "streams", errMissing)
	}
	var streams []json.RawMessage
	if err := json.Unmarshal(raw, &streams); err != nil {
		return nil, fmt.Errorf("key %q: not an array", "streams")
	}
	r.Streams = make([]StreamResult, 0, len(streams))
	for i, s := range streams {
		sr, err := decodeStream(s)
		if err != nil {
			return nil, fmt.Errorf("streams[%d]: %w", i, err)
		}
		r.Streams = append(r.Streams, sr)
	}
	if v, ok := f.int64("wb_version"); ok {
		wb := &WBResults{Version: v, Agent: f.string("wb_agent")}
		if raw, ok := m["wb_streams"]; ok {
			if err := json.Unmarshal(raw, &wb.Streams); err != nil {
				return nil, fmt.Errorf("key %q: %w", "wb_streams", err)
			}
		}
		r.WB = wb
	}
	if f.err != nil {
		return nil, f.err
	}
	return r, nil
}

func decodeStream(b []byte) (StreamResult, error) {
	m, err := objectFields(b)
	if err != nil {
		return StreamResult{}, err
	}
	f := &fieldReader{m: m}
	s := StreamResult{
		ID:          f.mustInt64("id"),
		Bytes:       f.mustInt64("bytes"),
		Retransmits: f.mustInt64("retransmits"),
		Jitter:      f.mustFloat64("jitter"),
		Errors:      f.mustInt64("errors"),
		Packets:     f.mustInt64("packets"),
	}
	s.StartTime, _ = f.float64("start_time")
	s.EndTime, _ = f.float64("end_time")
	oe, hasOE := f.int64("omitted_errors")
	op, hasOP := f.int64("omitted_packets")
	if f.err != nil {
		return StreamResult{}, f.err
	}
	switch {
	case hasOE && hasOP:
		s.Omitted = &OmittedCounts{Errors: oe, Packets: op}
	case hasOE != hasOP:
		return StreamResult{}, errors.New("omitted_errors and omitted_packets must come as a pair")
	}
	return s, nil
}

// Stream returns the result for stream id, or nil.
func (r *Results) Stream(id int64) *StreamResult {
	for i := range r.Streams {
		if r.Streams[i].ID == id {
			return &r.Streams[i]
		}
	}
	return nil
}
