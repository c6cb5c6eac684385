package session

import (
	"fmt"
	"sync"
	"time"
)

// rateLog passes log lines on, at most burst lines per kind per window;
// the rest are counted and summarised, so a flood of garbage costs the
// server a counter, not a line each.
type rateLog struct {
	out func(string)

	mu         sync.Mutex // guards following fields
	windowEnd  map[string]time.Time
	count      map[string]int
	suppressed map[string]int
}

const (
	rateLogBurst  = 5
	rateLogWindow = 10 * time.Second
)

func newRateLog(out func(string)) *rateLog {
	return &rateLog{out: out, windowEnd: map[string]time.Time{}, count: map[string]int{}, suppressed: map[string]int{}}
}

// log emits msg unless kind is over its budget.
func (l *rateLog) log(kind, msg string) {
	if l.out == nil {
		return
	}
	l.mu.Lock()
	now := time.Now()
	var summary string
	if now.After(l.windowEnd[kind]) {
		if n := l.suppressed[kind]; n > 0 {
			summary = fmt.Sprintf("(%d more %q lines suppressed)", n, kind)
		}
		l.windowEnd[kind] = now.Add(rateLogWindow)
		l.count[kind] = 0
		l.suppressed[kind] = 0
	}
	l.count[kind]++
	emit := l.count[kind] <= rateLogBurst
	if !emit {
		l.suppressed[kind]++
	}
	l.mu.Unlock()
	if summary != "" {
		l.out(summary)
	}
	if emit {
		l.out(msg)
	}
}

// flush reports what is still suppressed.
func (l *rateLog) flush() {
	if l.out == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, n := range l.suppressed {
		if n > 0 {
			l.out(fmt.Sprintf("(%d more %q lines suppressed)", n, k))
			l.suppressed[k] = 0
		}
	}
}
