package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"

	"github.com/wirebench/wirebench/internal/matrix"
	"github.com/wirebench/wirebench/internal/testutil/lgfake"
	"github.com/wirebench/wirebench/internal/testutil/zshell"
)

// labgridBoard starts a stand-in labgrid coordinator with a place "board"
// whose NetworkSerialPort is a stand-in Zephyr shell served over RFC 2217;
// each shell started is sent on shells.
func labgridBoard(t *testing.T, ctx context.Context, o zshell.Options) (co *lgfake.Coordinator, con *lgfake.Console, shells chan *zshell.Shell) {
	t.Helper()
	t.Setenv("LG_HOSTNAME", "bench")
	t.Setenv("LG_USERNAME", "tester")
	shells = make(chan *zshell.Shell, 8)
	con, err := lgfake.ServeConsole(ctx, false, func(ctx context.Context, rw io.ReadWriter) {
		shells <- zshell.Serve(ctx, rw, o)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { con.Close() })
	co, err = lgfake.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(co.Stop)
	co.AddPlace("board", "127.0.0.1", con.Port, "", 115200)
	return co, con, shells
}

func labgridMatrixArgs(co *lgfake.Coordinator, port int) []string {
	return []string{"matrix", "127.0.0.1", "-p", fmt.Sprint(port), "-t", "2", "-b", "2M", "-l", "1000",
		"--dut", "labgrid:board@" + co.Addr, "--dut-peer", "127.0.0.1", "--dut-timeout", "10", "--json"}
}

// waitReleased fails the test unless the place is free within a generous
// deadline.
func waitReleased(t *testing.T, co *lgfake.Coordinator) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if h := co.WaitHolder(ctx, "board", ""); h != "" {
		t.Errorf("place still held by %q after the run", h)
	}
}

// TestMatrixDUTLabgrid: the four-cell matrix on a board reserved through
// labgrid (--dut labgrid:board@HOST:PORT): the place is acquired as
// LG_HOSTNAME/LG_USERNAME, its console spoken to over RFC 2217 at the
// resource's speed, 4 cells ok with the device's figures, and the place
// released afterwards.
func TestMatrixDUTLabgrid(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	co, con, _ := labgridBoard(t, ctx, zshell.Options{Version: "3.4.0"})
	var out, errb bytes.Buffer
	code := run(ctx, labgridMatrixArgs(co, freeLoopbackPort(t)), &out, &errb)
	var m result.Matrix
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("exit %d, %v: %s\n%s", code, err, errb.String(), out.String())
	}
	if code != exitOK || len(m.Cells) != 4 {
		t.Fatalf("exit %d, %d cells: %s\n%s", code, len(m.Cells), errb.String(), out.String())
	}
	for _, c := range m.Cells {
		d := c.Device
		if c.Status != matrix.StatusOK || d == nil || d.Error != "" || d.BitsPerSecond == nil || !strings.HasPrefix(d.Firmware, "Zephyr 3.4.0") {
			t.Errorf("%s: %s %s, device %+v", c.Name(), c.Status, c.Reason, d)
		}
	}
	if co.Acquisitions("board") != 1 || con.Baud() != 115200 {
		t.Errorf("%d acquisitions, console at %d baud; want one, at 115200", co.Acquisitions("board"), con.Baud())
	}
	waitReleased(t, co)
}

// Ctrl-C in the middle of the matrix (the run's context cancelled once
// the first cell's report was printed) still releases the place.
func TestMatrixDUTLabgridCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	co, _, shells := labgridBoard(t, ctx, zshell.Options{Version: "3.4.0"})
	rctx, interrupt := context.WithCancel(ctx)
	defer interrupt()
	go func() {
		select {
		case sh := <-shells:
			select {
			case <-sh.Counted: // one report printed: a cell is done
			case <-ctx.Done():
			}
		case <-ctx.Done():
		}
		interrupt()
	}()
	var out, errb bytes.Buffer
	code := run(rctx, labgridMatrixArgs(co, freeLoopbackPort(t)), &out, &errb)
	if code == exitOK {
		t.Errorf("exit 0 after the interrupt: %s", out.String())
	}
	if co.Acquisitions("board") != 1 {
		t.Errorf("%d acquisitions, want 1", co.Acquisitions("board"))
	}
	waitReleased(t, co)
}

// Cells that fail on the device (a build without zperf) leave the place
// released too.
func TestMatrixDUTLabgridFailedCells(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	co, _, _ := labgridBoard(t, ctx, zshell.Options{Version: "3.4.0", NoZperf: true})
	var out, errb bytes.Buffer
	code := run(ctx, labgridMatrixArgs(co, freeLoopbackPort(t)), &out, &errb)
	var m result.Matrix
	if err := json.Unmarshal(out.Bytes(), &m); err != nil || code == exitOK || len(m.Cells) != 4 {
		t.Fatalf("exit %d, %v: %s\n%s", code, err, errb.String(), out.String())
	}
	for _, c := range m.Cells {
		if c.Status != matrix.StatusFailed || !strings.Contains(c.Reason, "zperf: command not found") {
			t.Errorf("%s: %s %q; want failed, quoting the shell", c.Name(), c.Status, c.Reason)
		}
	}
	if co.Acquisitions("board") != 1 {
		t.Errorf("%d acquisitions, want 1", co.Acquisitions("board"))
	}
	waitReleased(t, co)
}

// A place someone else holds: the run stops before any cell with an error
// naming the holder, and the place stays theirs.
func TestMatrixDUTLabgridHeld(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	co, con, _ := labgridBoard(t, ctx, zshell.Options{Version: "3.4.0"})
	co.Hold("board", "lab-pc/alice")
	var out, errb bytes.Buffer
	code := run(ctx, labgridMatrixArgs(co, freeLoopbackPort(t)), &out, &errb)
	if code == exitOK || !strings.Contains(errb.String(), "labgrid place board is acquired by lab-pc/alice") {
		t.Fatalf("exit %d: %s\n%s", code, errb.String(), out.String())
	}
	if h := co.Holder("board"); h != "lab-pc/alice" || con.Conns() != 0 {
		t.Errorf("holder %q, %d console connections; want alice's place untouched", h, con.Conns())
	}
	t.Logf("error: %s", strings.TrimSpace(errb.String()))
}
