package iperf2

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// testParallel is how many parallel subtests run at once unless -parallel
// says otherwise. The parallel subtests here (the real-peer suites) spend
// their time waiting for 1–2 s tests to end and compare counts, never
// speeds, so they may outnumber the cores; go's default of GOMAXPROCS (2
// on the CI machine) would run a suite of eight 1 s cases in 4 s.
const testParallel = 8

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(max(testParallel, runtime.GOMAXPROCS(0)))); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
