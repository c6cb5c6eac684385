package serve

import (
	"sync"
	"testing"
)

// TestSaveLineKeepsEveryTest: ended tests pushed faster than they are
// saved (here 5000 from 8 goroutines before the saver starts) all come
// out, each once, each goroutine's in its own order, and close waits for
// those still in line. The line had room for 256 before, and dropped the
// rest from the store.
func TestSaveLineKeepsEveryTest(t *testing.T) {
	var l line[[2]int]
	const goroutines, each = 8, 625
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				l.push([2]int{g, i})
			}
		}()
	}
	wg.Wait()
	l.close()
	next := make([]int, goroutines)
	n := 0
	for v := range l.all() {
		if v[1] != next[v[0]] {
			t.Fatalf("goroutine %d: got item %d, want %d (out of order or repeated)", v[0], v[1], next[v[0]])
		}
		next[v[0]]++
		n++
	}
	if n != goroutines*each {
		t.Errorf("%d items came out, want %d", n, goroutines*each)
	}
}

// TestSaveLineWaitsForPushes: a saver that starts first waits for the
// tests to end, and ends when the line is closed and empty.
func TestSaveLineWaitsForPushes(t *testing.T) {
	var l line[int]
	got := make(chan []int)
	go func() {
		var s []int
		for v := range l.all() {
			s = append(s, v)
		}
		got <- s
	}()
	for i := range 100 {
		l.push(i)
	}
	l.close()
	s := <-got
	if len(s) != 100 || s[0] != 0 || s[99] != 99 {
		t.Errorf("saver got %d items (%v…), want 0..99", len(s), s[:min(len(s), 3)])
	}
}
