package labctl

// `lab up` with the filled wire (the default): the filler that keeps the
// wire's bucket empty while the lab's traffic leaves it idle runs as its
// own process (`wirebench lab fill-run`, which is RunFiller) in the lab,
// started detached by Up, its counters read by ReadStatus, ended by Down
// with the lab's other processes. See docs/lab-hosts.md.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"

	"github.com/wirebench/wirebench/internal/netlab"
)

// fillerFiles returns the filler's files (RemoveFiles removes them with
// the relays').
func fillerFiles(name string) (cfg, stats, log string) {
	base := filepath.Join(StateDir, "lab-"+name+"-filler")
	return base + "-config.json", base + "-stats.json", base + ".log"
}

// fillerReady is the line RunFiller logs once it sends; fillerReadyRE
// matches it in the log.
const fillerReady = "wirebench: wire filler sending"

var fillerReadyRE = regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(fillerReady))

// startFiller writes the lab's filler links and starts `wirebench lab
// fill-run` in the namespace of the first, detached, waiting until it
// sends. It opens the other links' sockets in their own namespaces.
func startFiller(ctx context.Context, l *netlab.Lab, self func(...string) ([]string, error)) (*Wire, error) {
	links := l.FillLinks()
	if len(links) == 0 {
		return nil, errors.New("the lab has no shaped link to fill")
	}
	st := &Wire{}
	st.Config, st.Stats, st.Log = fillerFiles(l.Config.Lab)
	if err := startCounting(ctx, self, links[0].NS, st, links, "fill-run", fillerReadyRE); err != nil {
		return nil, fmt.Errorf("starting the wire's filler: %w", err)
	}
	return st, nil
}

// RunFiller is the filled wire's filler, run in the lab by `lab up` as
// `wirebench lab fill-run`: it reads its links from cfgPath, sends filler
// frames until ctx ends, and writes its counters to statsPath every second
// and when it ends.
func RunFiller(ctx context.Context, cfgPath, statsPath string, log io.Writer) error {
	var links []netlab.FillLink
	if err := readJSON(cfgPath, &links); err != nil {
		return err
	}
	f, err := netlab.OpenFiller(links)
	if err != nil {
		return err
	}
	f.Run()
	return runCounting(ctx, statsPath, log, fillerReady, func() any { return f.Stats() }, f.Close)
}

// readFillerStats reads the counters a lab's filler last wrote (nil when
// there are none yet).
func readFillerStats(st *State) []netlab.FillStats {
	if st == nil || st.Filler == nil {
		return nil
	}
	var s []netlab.FillStats
	if readJSON(st.Filler.Stats, &s) != nil {
		return nil
	}
	return s
}
