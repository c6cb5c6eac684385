//go:build linux

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/labctl"
	"github.com/wirebench/wirebench/internal/netlab"
	"github.com/wirebench/wirebench/internal/result"
	"golang.org/x/sys/unix"
)

// labMainEnv makes TestLabWirebenchHelper act as the wirebench binary: the
// lab tests run this test binary inside the lab (`lab exec b -- TESTBIN
// -test.run=^TestLabWirebenchHelper$ server`), so that what runs there is
// wirebench's real Main, with its signal handling.
const labMainEnv = "WIREBENCH_TEST_LAB_MAIN"

// TestLabWirebenchHelper is wirebench's main when labMainEnv is set.
func TestLabWirebenchHelper(t *testing.T) {
	if os.Getenv(labMainEnv) != "1" {
		t.Skip("the wirebench binary of the lab tests, not a test of its own")
	}
	selfArgv = testSelfArgv // `lab up --model` run here starts its relays as this helper too
	os.Exit(Main(flag.Args(), os.Stdout, os.Stderr))
}

// wirebenchArgv is the command line that runs wirebench with args.
func wirebenchArgv(args ...string) []string {
	return append([]string{os.Args[0], "-test.run=^TestLabWirebenchHelper$"}, args...)
}

// testSelfArgv is selfArgv in the lab tests: wirebench is this test binary
// running TestLabWirebenchHelper.
func testSelfArgv(args ...string) ([]string, error) { return wirebenchArgv(args...), nil }

// needLab skips unless this machine can make labs, and gives the test a lab
// name of its own that is removed (with everything in it) at the end.
func needLab(t *testing.T, name string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: wirebench lab creates network namespaces")
	}
	if err := netlab.Available(); err != nil {
		t.Skipf("no lab: %v", err)
	}
	t.Setenv(labMainEnv, "1")
	saved := selfArgv
	selfArgv = testSelfArgv
	t.Cleanup(func() {
		selfArgv = saved
		if _, _, err := netlab.RemoveLab(context.Background(), name, time.Second); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		os.Remove(labctl.StatePath(name))
		labctl.RemoveFiles(name)
	})
}

// runLab runs wirebench in process and fails the test unless it exits 0.
func runLab(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(context.Background(), args, &out, &errb); code != 0 {
		t.Fatalf("wirebench %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

func labStatusJSON(t *testing.T, name string) labctl.Status {
	t.Helper()
	out, _ := runLab(t, "lab", "status", "--name", name, "--json")
	var s labctl.Status
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	return s
}

// nsInode returns the device and inode of a named namespace's file: the
// identity of the namespace as long as anything keeps it alive.
func nsInode(t *testing.T, ns string) [2]uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join("/run/netns", ns), &st); err != nil {
		t.Fatalf("stat %s: %v", ns, err)
	}
	return [2]uint64{st.Dev, st.Ino}
}

// waitInNamespace waits until process pid is in the network namespace
// whose nsfs device and inode are ns.
func waitInNamespace(ctx context.Context, t *testing.T, pid int, ns [2]uint64) {
	t.Helper()
	for {
		var st syscall.Stat_t
		if err := syscall.Stat(fmt.Sprintf("/proc/%d/ns/net", pid), &st); err == nil && st.Dev == ns[0] && st.Ino == ns[1] {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("process %d never entered the namespace", pid)
		case <-time.After(time.Millisecond):
		}
	}
}

// assertLabGone checks, from the kernel's view, that nothing of the lab is
// left: no named namespace, no state file, no process in any of the lab's
// former namespaces (a namespace, and with it its veth pair and qdiscs,
// lives exactly as long as a process or mount holds it), no process that
// was in the lab, and no wbl- link in the root namespace.
func assertLabGone(t *testing.T, name string, inodes [][2]uint64, pids []int) {
	t.Helper()
	out, err := exec.Command("ip", "netns", "list").CombinedOutput()
	if err != nil {
		t.Fatalf("ip netns list: %v: %s", err, out)
	}
	if strings.Contains(string(out), netlab.LabPrefix+name+"-") {
		t.Errorf("namespaces left:\n%s", out)
	}
	if _, err := os.Stat(labctl.StatePath(name)); !os.IsNotExist(err) {
		t.Errorf("state file %s left (stat: %v)", labctl.StatePath(name), err)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/ns/net")
	for _, p := range procs {
		var st syscall.Stat_t
		if syscall.Stat(p, &st) == nil && slices.Contains(inodes, [2]uint64{st.Dev, st.Ino}) {
			t.Errorf("%s is still in one of the lab's namespaces", filepath.Dir(filepath.Dir(p)))
		}
	}
	for _, pid := range pids {
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("process %d of the lab is still running", pid)
		}
	}
	out, err = exec.Command("ip", "-o", "link").CombinedOutput()
	if err != nil {
		t.Fatalf("ip link: %v: %s", err, out)
	}
	if strings.Contains(string(out), "wbl-") {
		t.Errorf("a lab link is in the root namespace:\n%s", out)
	}
}

// startInLab runs `lab exec host -- wirebench args…` in process in the
// background and waits for ready in its output.
func startInLab(ctx context.Context, t *testing.T, name, host string, args []string, ready string) chan int {
	t.Helper()
	all := append([]string{"lab", "exec", "--name", name, host, "--"}, wirebenchArgv(args...)...)
	_, _, done := startServerCmd(ctx, t, all, ready)
	return done
}

// TestLabUpExecDown: `lab up`, `lab status`, a real UDP measurement from a
// to b through `lab exec` (wirebench server in b, client in a, JSON
// result), exit codes propagated, then `lab down` leaves nothing.
func TestLabUpExecDown(t *testing.T) {
	const name = "t_updown"
	needLab(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	out, _ := runLab(t, "lab", "up", "--name", name, "--net", "198.19.4.0/24", "--rate", "100mbit")
	for _, want := range []string{
		"lab " + name + " is up",
		"a  198.19.4.1 ", "b  198.19.4.2 ",
		"wirebench lab exec --name " + name + " b -- wirebench server",
		"wirebench lab exec --name " + name + " a -- wirebench client 198.19.4.2 -u -b 100M --link-rate 100M",
		"95.70 Mbit/s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lab up output lacks %q:\n%s", want, out)
		}
	}
	t.Logf("lab up:\n%s", out)

	s := labStatusJSON(t, name)
	if s.State != "up" || len(s.Namespaces) != 2 || s.Config == nil || s.Config.RateBPS != 100e6 {
		t.Fatalf("status: %+v", s)
	}
	for i, ns := range s.Namespaces {
		if len(ns.Links) != 1 || ns.Links[0].Qdisc != "htb" || ns.Links[0].RateBPS != 100e6 || !ns.Links[0].Up {
			t.Errorf("%s: links %+v, want one up link with htb at 100 Mbit/s", ns.Name, ns.Links)
		}
		if want := fmt.Sprintf("198.19.4.%d/24", i+1); len(ns.Links) == 1 && !slices.Contains(ns.Links[0].Addrs, want) {
			t.Errorf("%s: addresses %v, want %s", ns.Name, ns.Links[0].Addrs, want)
		}
		if len(ns.Routes) != 0 {
			t.Errorf("%s: routes %v, want none (no default route)", ns.Name, ns.Routes)
		}
	}
	var inodes [][2]uint64
	for _, ns := range s.Namespaces {
		inodes = append(inodes, nsInode(t, ns.Name))
	}

	// Exit codes come through; the command runs in the lab's namespace.
	var o, e bytes.Buffer
	if code := run(ctx, []string{"lab", "exec", "--name", name, "a", "--", "sh", "-c", "exit 7"}, &o, &e); code != 7 {
		t.Errorf("exit 7 came back as %d (%s)", code, e.String())
	}
	o.Reset()
	if code := run(ctx, []string{"lab", "exec", "--name", name, "b", "ip", "-o", "-4", "addr", "show", "dev", "wbl-b"}, &o, &e); code != 0 || !strings.Contains(o.String(), "198.19.4.2/24") {
		t.Errorf("ip addr in b: exit %d, %q", code, o.String())
	}

	srvDone := startInLab(ctx, t, name, "b", []string{"server"}, "listening")
	s = labStatusJSON(t, name)
	serverPIDs := s.Namespaces[1].PIDs
	if len(serverPIDs) == 0 {
		t.Fatalf("status shows no process in b while the server runs: %+v", s.Namespaces[1])
	}
	out, _ = runLab(t, append([]string{"lab", "exec", "--name", name, "a", "--"},
		wirebenchArgv("client", "198.19.4.2", "-u", "-b", "5M", "-t", "1", "--json")...)...)
	var r result.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("client JSON: %v\n%s", err, out)
	}
	if r.Receiver == nil || r.Receiver.Packets < 100 || r.Receiver.Source != "peer-report" {
		t.Fatalf("the measurement did not cross the lab: receiver %+v", r.Receiver)
	}
	t.Logf("5M for 1 s a→b: receiver %d datagrams, %.2f Mbit/s, lost %d", r.Receiver.Packets, r.Receiver.BitsPerSecond/1e6, r.Receiver.Lost)

	out, _ = runLab(t, "lab", "down", "--name", name)
	if !strings.Contains(out, "lab "+name+" removed") || !strings.Contains(out, fmt.Sprint(serverPIDs[0])) {
		t.Errorf("lab down output: %q", out)
	}
	select {
	case <-srvDone: // lab down ended the server (and so the exec running it)
	case <-ctx.Done():
		t.Fatal("the server in the lab did not end with lab down")
	}
	assertLabGone(t, name, inodes, serverPIDs)
	if s := labStatusJSON(t, name); s.State != "down" || len(s.Namespaces) != 0 {
		t.Errorf("status after down: %+v", s)
	}
	out, _ = runLab(t, "lab", "down", "--name", name)
	if !strings.Contains(out, "nothing to remove") {
		t.Errorf("second lab down: %q", out)
	}
}

// nsfsMagic is the file system magic of a mounted namespace (NSFS_MAGIC).
const nsfsMagic = 0x6e736673

// TestLabStatusUnmountedNamespace: a run killed between creating a
// namespace's file in /run/netns and mounting the namespace on it leaves a
// plain file. Status shows it as a partial lab's namespace that holds
// nothing (it failed on it, in a CI run), and lab down removes it.
func TestLabStatusUnmountedNamespace(t *testing.T) {
	const name = "t_half"
	needLab(t, name)
	if err := os.MkdirAll("/run/netns", 0o755); err != nil {
		t.Fatal(err)
	}
	ns := netlab.LabNamespace(name, "a")
	path := filepath.Join("/run/netns", ns)
	if err := os.WriteFile(path, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	s := labStatusJSON(t, name)
	if s.State != labctl.StatePartial || len(s.Namespaces) != 1 || s.Namespaces[0].Name != ns || !s.Namespaces[0].Unmounted {
		t.Fatalf("status with an unmounted namespace file: %+v", s)
	}
	out, _ := runLab(t, "lab", "status", "--name", name)
	if !strings.Contains(out, "partial") || !strings.Contains(out, "no namespace: only its file") {
		t.Errorf("status text: %q", out)
	}
	out, _ = runLab(t, "lab", "down", "--name", name)
	if !strings.Contains(out, ns) {
		t.Errorf("lab down did not say it removed %s: %q", ns, out)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s after lab down: %v", path, err)
	}
	if s := labStatusJSON(t, name); s.State != labctl.StateDown {
		t.Errorf("status after lab down: %+v", s)
	}
}

// TestLabUpAfterKill: `lab up` killed with SIGKILL while it works leaves
// whatever it had made; a crashed run's leftovers with a process still in
// them and a garbled state file are found from the kernel's view alone;
// the next `lab up` removes both and works, and refuses a lab that is
// complete and up.
func TestLabUpAfterKill(t *testing.T) {
	const name = "t_crash"
	needLab(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// A real kill -9 of `lab up`, as soon as its first namespace exists.
	cmd := exec.CommandContext(ctx, wirebenchArgv()[0], wirebenchArgv("lab", "up", "--name", name, "--medium", "eth100")[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The namespace's file appears before the namespace is mounted on it;
	// a kill between the two is TestLabStatusUnmountedNamespace's case.
	nsA := filepath.Join("/run/netns", netlab.LabNamespace(name, "a"))
	for {
		var fs unix.Statfs_t
		if err := unix.Statfs(nsA, &fs); (err == nil && fs.Type == nsfsMagic) || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cmd.Process.Kill()
	err := cmd.Wait()
	t.Logf("lab up killed: %v", err)
	s := labStatusJSON(t, name)
	t.Logf("after kill -9: state %s, %d namespace(s)", s.State, len(s.Namespaces))
	if s.State == "down" {
		t.Fatalf("nothing of the killed lab up exists: the kill came too late to test anything")
	}

	// Worse leftovers: a process inside the namespace and a garbled state file.
	sleeper := exec.Command("ip", "netns", "exec", netlab.LabNamespace(name, "a"), "sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	sleepDone := make(chan error, 1)
	go func() { sleepDone <- sleeper.Wait() }()
	inode := nsInode(t, netlab.LabNamespace(name, "a"))
	// `ip netns exec` enters the namespace some time after it started;
	// until it has, no scan of the kernel's view can find it there.
	waitInNamespace(ctx, t, sleeper.Process.Pid, inode)
	// The kill may come before lab up made the state directory.
	if err := os.MkdirAll(filepath.Dir(labctl.StatePath(name)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(labctl.StatePath(name), []byte("{garbled"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := labStatusJSON(t, name); s.State != "partial" || !strings.Contains(s.StateFileError, "lab-"+name+".json") {
		t.Errorf("status with a garbled state file: %+v", s)
	}

	_, errOut := runLab(t, "lab", "up", "--name", name, "--medium", "eth100")
	if !strings.Contains(errOut, "removed leftovers of an earlier lab "+name) || !strings.Contains(errOut, "ended processes") {
		t.Errorf("lab up did not say what it removed: %q", errOut)
	}
	select {
	case <-sleepDone:
	case <-time.After(10 * time.Second):
		t.Fatal("the process in the crashed lab still runs")
	}
	if s := labStatusJSON(t, name); s.State != "up" || len(s.Namespaces) != 2 {
		t.Fatalf("status after recovery: %+v", s)
	}
	if nsInode(t, netlab.LabNamespace(name, "a")) == inode {
		t.Errorf("namespace a is the crashed run's, not a new one")
	}

	var o, e bytes.Buffer
	if code := run(ctx, []string{"lab", "up", "--name", name}, &o, &e); code != exitFailure || !strings.Contains(e.String(), "already up") {
		t.Errorf("lab up on a lab that is up: exit %d, %q", code, e.String())
	}
	var inodes [][2]uint64
	for _, end := range []string{"a", "b"} {
		inodes = append(inodes, nsInode(t, netlab.LabNamespace(name, end)))
	}
	runLab(t, "lab", "down", "--name", name)
	assertLabGone(t, name, append(inodes, inode), []int{sleeper.Process.Pid})
}

// labNoRootEnv makes TestLabNoRootHelper run: it is the unprivileged child
// of TestLabNoRoot.
const labNoRootEnv = "WIREBENCH_TEST_LAB_NOROOT"

// TestLabNoRoot: without root every lab command fails with exit code 1 and
// one line that says root (or which capabilities) it needs.
func TestLabNoRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		var o, e bytes.Buffer
		code := run(context.Background(), []string{"lab", "up", "--name", "t_noroot"}, &o, &e)
		checkNoRoot(t, code, e.String())
		return
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is not installed: cannot drop to user nobody")
	}
	bin := copyForNobody(t, os.Args[0])
	for _, sub := range []string{"up", "down", "status", "exec"} {
		cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
			bin, "-test.run=^TestLabNoRootHelper$")
		cmd.Env = append(os.Environ(), labNoRootEnv+"="+sub)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helper: %v\n%s", err, out)
		}
		var code int
		var stderr string
		if _, err := fmt.Sscanf(string(out), "exit code %d\n", &code); err != nil {
			t.Fatalf("helper output: %q", out)
		}
		_, stderr, _ = strings.Cut(string(out), "stderr: ")
		stderr, _, _ = strings.Cut(stderr, "\nPASS")
		t.Logf("lab %s as nobody: exit %d: %s", sub, code, stderr)
		checkNoRoot(t, code, stderr)
	}
}

func checkNoRoot(t *testing.T, code int, stderr string) {
	t.Helper()
	if code != exitFailure {
		t.Errorf("exit code %d, want %d", code, exitFailure)
	}
	if !strings.HasPrefix(stderr, "wirebench: lab needs root (or CAP_SYS_ADMIN and CAP_NET_ADMIN)") ||
		strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("stderr %q: want one line saying lab needs root", stderr)
	}
}

// TestLabNoRootHelper is the unprivileged child of TestLabNoRoot.
func TestLabNoRootHelper(t *testing.T) {
	sub := os.Getenv(labNoRootEnv)
	if sub == "" {
		t.Skip("the unprivileged child of TestLabNoRoot, not a test of its own")
	}
	args := []string{"lab", sub, "--name", "t_noroot"}
	if sub == "exec" {
		args = append(args, "a", "--", "true")
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	fmt.Printf("exit code %d\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
}
