package engine

import (
	"runtime"
	"testing"
)

// TestHoldPLeavesAProcessor: senders may keep at most GOMAXPROCS-1
// processors through their sleeps, so the process's receivers always have
// one; each given back is free to take again.
func TestHoldPLeavesAProcessor(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	if heldP.Load() != 0 {
		t.Fatalf("%d processors kept before the test", heldP.Load())
	}
	if !holdP() || !holdP() {
		t.Fatal("two of three processors could not be kept")
	}
	if holdP() {
		t.Fatal("a third of three processors was kept: no receiver could run")
	}
	heldP.Add(-1)
	if !holdP() {
		t.Fatal("a processor given back could not be kept again")
	}
	heldP.Add(-2)
	runtime.GOMAXPROCS(1)
	if holdP() {
		t.Fatal("the only processor was kept")
	}
}
