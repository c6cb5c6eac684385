package pscheduler

import (
	"bytes"
	"context"
	"testing"
)

// FuzzMethods feeds arbitrary input to every method that sends no traffic:
// each must answer or return an error, never panic.
func FuzzMethods(f *testing.F) {
	f.Add(`{"type":"throughput","spec":{"dest":"192.0.2.1","udp":true,"duration":"PT5S"}}`)
	f.Add(`{"type":"rtt","spec":{"dest":"127.0.0.1","count":3,"deadline":"P1D"}}`)
	f.Add(`{"participant":1,"test":{"type":"throughput","spec":{}}}`)
	f.Add(`{"test":{"type":"throughput","spec":{"dest":"x","reverse":true}},"results":[{"succeeded":true,"summary":{"summary":{"throughput-bits":1}}},{"succeeded":true,"summary":{"summary":{}}}]}`)
	f.Add(`{"test":{"type":"rtt","spec":{}},"results":[{"roundtrips":null}]}`)
	f.Add(`{"type":"throughput","spec":{"dest":"x","duration":"PT99999999999999999999S"}}`)
	cfg := Config{Devices: []Device{{Dest: "192.0.2.0/24", Dialect: "raw"}}}
	f.Fuzz(func(t *testing.T, in string) {
		for _, m := range []string{"can-run", "duration", "participant-data", "merged-results"} {
			var out bytes.Buffer
			_ = Invoke(context.Background(), m, bytes.NewReader([]byte(in)), &out, cfg)
		}
	})
}
