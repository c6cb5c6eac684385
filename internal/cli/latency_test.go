package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/echo"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2"
)

func TestLatencyUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no host", []string{"latency"}, "a host is missing"},
		{"proto", []string{"latency", "--proto", "sctp", "127.0.0.1"}, `invalid --proto "sctp": want one of udp, tcp, connect`},
		{"size", []string{"latency", "-s", "10", "127.0.0.1"}, "message size 10 out of range"},
		{"count and time", []string{"latency", "-c", "5", "-t", "1", "127.0.0.1"}, "choose one of -c and -t"},
		{"interval", []string{"latency", "-i", "-1", "127.0.0.1"}, "invalid --interval"},
		{"client probe", []string{"client", "--latency=tcp", "127.0.0.1"}, `invalid --latency "tcp"`},
		{"client csv", []string{"client", "--latency", "--csv", "127.0.0.1"}, "--latency has no CSV form"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(context.Background(), tt.args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errb.String(), exitUsage, tt.want)
			}
		})
	}
}

func TestLatencyLoopbackJSON(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := iperf2.Listen(ctx, session.ServerConfig{Bind: "127.0.0.1", Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	echo.Register(srv, echo.ServerConfig{})
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	defer func() { cancel(); <-done }()
	port := strconv.Itoa(srv.Port())
	for _, proto := range []string{"udp", "tcp", "connect"} {
		t.Run(proto, func(t *testing.T) {
			var out, errb bytes.Buffer
			args := []string{"latency", "--json", "--proto", proto, "-c", "50", "-i", "0", "-p", port, "127.0.0.1"}
			if code := run(context.Background(), args, &out, &errb); code != exitOK {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			var r result.Latency
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatalf("decoding: %v\n%s", err, out.String())
			}
			if r.Schema != "wirebench/1" || r.Kind != "request-response" || r.Test.Proto != proto || r.Sent != 50 || r.Received != 50 ||
				r.RTT.Count != 50 || r.RTT.P50 <= 0 || r.RTT.P50 > r.RTT.Max {
				t.Errorf("result %+v", r)
			}
		})
	}
	// Text output, and a client with --latency on loopback.
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"latency", "-c", "5", "-p", port, "127.0.0.1"}, &out, &errb); code != exitOK ||
		!strings.Contains(out.String(), "sent 5, answered 5") {
		t.Errorf("text: exit %d\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	args := []string{"client", "127.0.0.1", "-p", port, "-t", "0.3", "--latency", "--latency-idle", "0.1", "--json"}
	if code := run(context.Background(), args, &out, &errb); code != exitOK {
		t.Fatalf("client --latency: exit %d: %s", code, errb.String())
	}
	var u result.UnderLoad
	if err := json.Unmarshal(out.Bytes(), &u); err != nil {
		t.Fatalf("decoding: %v\n%s", err, out.String())
	}
	if u.Kind != "under-load" || u.Idle.Received == 0 || u.Loaded.Received == 0 || u.Throughput == nil || u.Throughput.Sender == nil {
		t.Errorf("under-load result %+v", u)
	}
}
