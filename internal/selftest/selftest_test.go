package selftest

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/units"
)

// TestRunJSON: without text, both tests come back in the document, TCP
// then UDP, and the TCP one carries what the receiving side counted (its
// report, or the in-process server's own count where none came back).
func TestRunJSON(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	doc, err := Run(ctx, 300*time.Millisecond, units.Rate{Value: 10e6}, nil, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Kind != Kind || doc.Schema != result.Schema || len(doc.Tests) != 2 {
		t.Fatalf("document %s/%s with %d tests, want %s with 2", doc.Schema, doc.Kind, len(doc.Tests), Kind)
	}
	tcp, udp := doc.Tests[0], doc.Tests[1]
	if tcp.Test.Protocol != result.TCP || udp.Test.Protocol != result.UDP {
		t.Errorf("protocols %s, %s; want tcp then udp", tcp.Test.Protocol, udp.Test.Protocol)
	}
	if tcp.Receiver == nil || tcp.Receiver.Bytes == 0 {
		t.Errorf("TCP receiver %+v, want the receiving side's count", tcp.Receiver)
	}
}

// TestRunText: with text, each test is printed (and the document holds
// none).
func TestRunText(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	doc, err := Run(ctx, 300*time.Millisecond, units.Rate{Value: 10e6}, &out, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Tests) != 0 {
		t.Errorf("text run returned %d tests in the document, want none", len(doc.Tests))
	}
	if n := strings.Count(out.String(), "[  1]") + strings.Count(out.String(), "[  2]"); n == 0 {
		t.Errorf("no test lines printed:\n%s", out.String())
	}
}
