package session

import (
	"testing"

	"github.com/wirebench/wirebench/internal/result"
)

func TestAddTCPFiguresMixedBasis(t *testing.T) {
	var total result.Sender
	AddTCPFigures(&total, &result.Sender{Bytes: 10, Basis: result.BasisWritten})
	AddTCPFigures(&total, &result.Sender{Bytes: 10, Basis: result.BasisAcknowledged})
	if total.Basis != result.BasisWritten {
		t.Fatalf("basis %q for a sum with a stream counted from bytes written", total.Basis)
	}
}
