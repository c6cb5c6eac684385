package iperf3

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func FuzzReadJSON(f *testing.F) {
	f.Add(binary.BigEndian.AppendUint32(nil, 2), []byte("{}"))
	f.Add(binary.BigEndian.AppendUint32(nil, 0xffffffff), []byte("{"))
	f.Add(binary.BigEndian.AppendUint32(nil, 5), []byte("[1,2]"))
	f.Fuzz(func(t *testing.T, hdr, body []byte) {
		in := append(append([]byte{}, hdr...), body...)
		got, err := ReadJSONFrame(bytes.NewReader(in), 4096)
		if err != nil {
			return
		}
		if len(in) < 4 || int(binary.BigEndian.Uint32(in)) != len(got) || len(got) > 4096 {
			t.Fatalf("accepted %d bytes from a %d-byte input", len(got), len(in))
		}
	})
}

func FuzzDecodeParams(f *testing.F) {
	f.Add([]byte(`{"udp":true,"omit":0,"time":1,"num":0,"blockcount":0,"parallel":1,"len":200,"bandwidth":1000000,"pacing_timer":1000,"client_version":"3.12"}`))
	f.Add([]byte(`{"tcp":true,"reverse":false,"bandwidth":1e+300,"wb_version":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodeParams(b)
		if err != nil {
			return
		}
		_ = p.Validate()
		enc, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		p2, err := DecodeParams(enc)
		if err != nil {
			t.Fatalf("re-decoding our own encoding: %v\n%s", err, enc)
		}
		enc2, _ := p2.MarshalJSON()
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding not stable:\n%s\n%s", enc, enc2)
		}
	})
}

func FuzzDecodeResults(f *testing.F) {
	f.Add([]byte(`{"cpu_util_total":1,"cpu_util_user":0,"cpu_util_system":1,"sender_has_retransmits":18446744073709551615,"streams":[{"id":1,"bytes":5,"retransmits":-1,"jitter":0,"errors":0,"packets":0,"omitted_errors":0,"omitted_packets":0}]}`))
	f.Add([]byte(`{"cpu_util_total":1,"cpu_util_user":0,"cpu_util_system":1,"sender_has_retransmits":0,"streams":[],"wb_version":1,"wb_streams":[{"id":1}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeResults(b)
		if err != nil {
			return
		}
		enc, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeResults(enc); err != nil {
			t.Fatalf("re-decoding our own encoding: %v\n%s", err, enc)
		}
	})
}

func FuzzStateMachine(f *testing.F) {
	f.Add(true, []byte{9, 10, 1, 2, 4, 13, 14, 16})
	f.Add(false, []byte{9, 0xfe, 1})
	f.Add(false, []byte{9, 10, 1, 1, 2, 12, 4})
	f.Fuzz(func(t *testing.T, client bool, seq []byte) {
		role := RoleServer
		if client {
			role = RoleClient
		}
		m := NewMachine(role)
		for _, b := range seq {
			s := State(int8(b))
			before, wasDone := m.State(), m.Done()
			err := m.Step(stateSender(s), s)
			switch {
			case err != nil && (m.State() != before || m.Done() != wasDone):
				t.Fatal("state changed on error")
			case err == nil && wasDone:
				t.Fatalf("%v accepted after the end", s)
			case err == nil && !s.Known():
				t.Fatalf("unknown %v accepted", s)
			}
			_ = s.String()
		}
	})
}
