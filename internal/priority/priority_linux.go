package priority

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// threadNice is the nice value of thread tid (getpriority's raw answer
// is 20 - nice).
func threadNice(tid int) (int, error) {
	raw, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if err != nil {
		return 0, err
	}
	return 20 - raw, nil
}

// raise sets every thread of the process to nice. Threads the Go runtime
// makes meanwhile inherit the value of the thread that makes them, so a
// second pass catches one made from a thread the first had not reached.
func raise(nice int) Outcome {
	o := Outcome{Asked: nice}
	cur, err := threadNice(os.Getpid())
	if err != nil {
		o.Err = err
		return o
	}
	o.Nice = cur
	if nice >= 0 || cur <= nice {
		o.Raised = cur <= nice
		return o
	}
	for range 2 {
		tids, err := threads()
		if err != nil {
			o.Err = err
			return o
		}
		for _, tid := range tids {
			if n, err := threadNice(tid); err == nil && n <= nice {
				continue
			}
			if err := setNice(tid, nice); err != nil {
				if errors.Is(err, unix.ESRCH) {
					continue // the thread ended meanwhile
				}
				if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
					err = ErrNotPermitted
				}
				o.Err = err
				return o
			}
		}
	}
	o.Nice, o.Raised = nice, true
	return o
}

// threads lists the ids of the process's threads.
func threads() ([]int, error) {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	tids := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

// setNice sets thread tid to nice.
func setNice(tid, nice int) error { return unix.Setpriority(unix.PRIO_PROCESS, tid, nice) }
