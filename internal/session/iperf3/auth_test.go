package iperf3

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf3/serverauth"
	"github.com/wirebench/wirebench/internal/testutil/authkeys"
	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

// authFiles are the key and users files of an authenticating server.
type authFiles struct{ authkeys.Files }

func newAuthFiles(t *testing.T) authFiles { return authFiles{authkeys.Write(t)} }

func (f authFiles) server(t *testing.T, secret []byte) *serverauth.Auth {
	t.Helper()
	a, err := serverauth.New(serverauth.Config{PrivateKeyPath: f.Private, UsersPath: f.Users, Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func (f authFiles) client(user, password string) session.Iperf3ClientAuth {
	return session.Iperf3ClientAuth{Username: user, Password: password, PublicKey: &f.Key.PublicKey}
}

// logsHave reports whether a server log line contains sub, waiting for it
// a while: the server logs a refusal after the client has seen it.
func (ts *i3TestServer) logsHave(sub string) bool {
	for deadline := time.Now().Add(guard); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		logs := strings.Join(ts.Logs(), "\n")
		if strings.Contains(logs, sub) {
			return true
		}
	}
	return false
}

// runRefusedIperf3 runs the real iperf3 client, which must fail, and
// returns what it printed.
func runRefusedIperf3(t *testing.T, port int, password string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	cmd := exec.CommandContext(ctx, iperf3Bin(t), append([]string{"-c", "127.0.0.1", "-p", strconv.Itoa(port), "-t", "1"}, args...)...)
	cmd.Env = append(os.Environ(), "IPERF3_PASSWORD="+password)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("iperf3 %v: %v, want exit code 1:\n%s", args, err, out.String())
	}
	return out.String()
}

// TestIperf3AuthRealClientAgainstOurServer: real iperf3 3.12 with
// --username and --rsa-public-key-path (password in IPERF3_PASSWORD) runs
// its test on our server; a wrong password, an unknown user and no
// credentials are refused, and iperf3 prints what it prints against its
// own server.
func TestIperf3AuthRealClientAgainstOurServer(t *testing.T) {
	iperf3Bin(t)
	f := newAuthFiles(t)
	ts := startI3Server(t, session.ServerConfig{}, Config{Auth: f.server(t, nil)})
	cred := []string{"--username", "alice", "--rsa-public-key-path", f.Public}

	t.Setenv("IPERF3_PASSWORD", "secret")
	runIperf3Client(t, ts.i3port, append([]string{"-t", "1"}, cred...)...)
	r := ts.waitResults(1)[0]
	if r.Receiver == nil || r.Receiver.Bytes == 0 {
		t.Fatalf("the authenticated test measured nothing: %+v", r)
	}
	if !ts.logsHave("authenticated (user alice)") {
		t.Errorf("no log of alice's authentication")
	}

	for _, tc := range []struct {
		name, password string
		args           []string
		log            string
	}{
		{"wrong password", "Secret", cred, `wrong password for user "alice"`},
		{"unknown user", "secret", []string{"--username", "mallory", "--rsa-public-key-path", f.Public}, `unknown user "mallory"`},
		{"no credentials", "", nil, "no authtoken"},
	} {
		out := runRefusedIperf3(t, ts.i3port, tc.password, tc.args...)
		if !strings.Contains(out, "iperf3: error - test authorization failed") {
			t.Errorf("%s: iperf3 printed:\n%s\nwant \"iperf3: error - test authorization failed\"", tc.name, out)
		}
		if !ts.logsHave(tc.log) {
			t.Errorf("%s: no server log containing %q", tc.name, tc.log)
		}
	}
	if n := ts.count(); n != 1 {
		t.Errorf("%d results, want only the authenticated test's", n)
	}

	// A server with only the shared secret refuses real iperf3, which
	// cannot carry it, even with valid RSA credentials.
	secretAuth, err := serverauth.New(serverauth.Config{Secret: []byte("s")})
	if err != nil {
		t.Fatal(err)
	}
	secretOnly := startI3Server(t, session.ServerConfig{}, Config{Auth: secretAuth})
	if out := runRefusedIperf3(t, secretOnly.i3port, "secret", cred...); !strings.Contains(out, "iperf3: error - test authorization failed") {
		t.Errorf("secret-only server: iperf3 printed:\n%s", out)
	}
}

// TestIperf3AuthOurClientAgainstRealServer: our client authenticates to
// `iperf3 -s --rsa-private-key-path … --authorized-users-path …`; a wrong
// password is refused with IEAUTHTEST and the server says so.
func TestIperf3AuthOurClientAgainstRealServer(t *testing.T) {
	f := newAuthFiles(t)
	port, reports := realIperf3ServerReports(t, "--rsa-private-key-path", f.Private, "--authorized-users-path", f.Users)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	cfg := session.ClientConfig{Host: "127.0.0.1", Port: port, Dialect: session.DialectIperf3, Duration: time.Second}

	// 3.12's -1 does not count a test refused at authentication: the
	// wrong password goes first, and the server still runs the next test.
	bad := cfg
	bad.Auth = f.client("alice", "wrong")
	_, err := runClient(ctx, bad)
	var se *i3wire.ServerErr
	if !errors.As(err, &se) || se.IErrno != i3wire.ErrnoAuthTest || !strings.Contains(err.Error(), "test authorization failed") {
		t.Fatalf("wrong password: RunClient = %v, want iperf3's IEAUTHTEST (142) refusal", err)
	}

	// After a refused test 3.12 closes its listening socket and opens a
	// new one: a connection in between is reset or refused, and retried.
	cfg.Auth = f.client("alice", "secret")
	var r *result.Result
	for try := 0; ; try++ {
		r, err = runClient(ctx, cfg)
		if err == nil || try == 50 || !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.ECONNREFUSED) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("RunClient: %v", err)
	}
	if r.Error != "" {
		t.Fatalf("test failed: %s", r.Error)
	}
	reps := reports()
	if len(reps) != 2 || reps[0].Error != "error - test authorization failed" || reps[1].Error != "" {
		errs := make([]string, len(reps))
		for i, rep := range reps {
			errs[i] = strconv.Quote(rep.Error)
		}
		t.Fatalf("iperf3 -s printed %d documents with errors [%s], want the refusal, then the test", len(reps), strings.Join(errs, " "))
	}
	checkAgainstIperf3Server(t, &cfg, r, reps[1])
}

// TestIperf3AuthOurClientOurServer runs both sides of the RSA
// authentication and of the shared secret, and each refusal.
func TestIperf3AuthOurClientOurServer(t *testing.T) {
	f := newAuthFiles(t)
	secret := []byte("lab-secret")
	rsaOnly := startI3Server(t, session.ServerConfig{}, Config{Auth: f.server(t, nil)})
	both := startI3Server(t, session.ServerConfig{}, Config{Auth: f.server(t, secret)})
	secretAuth, err := serverauth.New(serverauth.Config{Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	secretOnly := startI3Server(t, session.ServerConfig{}, Config{Auth: secretAuth})
	oaep := f.client("bob", "hunter2")
	oaep.Padding = i3wire.PaddingOAEP

	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	for _, tc := range []struct {
		name string
		srv  *i3TestServer
		auth session.Iperf3ClientAuth
		ok   bool
	}{
		{"rsa pkcs1", rsaOnly, f.client("alice", "secret"), true},
		{"rsa oaep", rsaOnly, oaep, true},
		{"rsa wrong password", rsaOnly, f.client("alice", "hunter2"), false},
		{"rsa unknown user", rsaOnly, f.client("carol", "secret"), false},
		{"rsa none", rsaOnly, session.Iperf3ClientAuth{}, false},
		{"rsa server, secret only", rsaOnly, session.Iperf3ClientAuth{Secret: secret}, false},
		{"secret", secretOnly, session.Iperf3ClientAuth{Secret: secret}, true},
		{"secret wrong", secretOnly, session.Iperf3ClientAuth{Secret: []byte("lab-secreT")}, false},
		{"secret none", secretOnly, session.Iperf3ClientAuth{}, false},
		{"secret server, rsa only", secretOnly, f.client("alice", "secret"), false},
		{"either: rsa", both, f.client("alice", "secret"), true},
		{"either: secret", both, session.Iperf3ClientAuth{Secret: secret}, true},
		{"either: wrong both", both, session.Iperf3ClientAuth{Username: "alice", Password: "x", PublicKey: &f.Key.PublicKey, Secret: []byte("x")}, false},
	} {
		before := tc.srv.count()
		cfg := session.ClientConfig{Host: "127.0.0.1", Port: tc.srv.i3port, Dialect: session.DialectIperf3, Duration: 200 * time.Millisecond, Auth: tc.auth}
		r, err := runClient(ctx, cfg)
		if !tc.ok {
			var se *i3wire.ServerErr
			if !errors.As(err, &se) || se.IErrno != i3wire.ErrnoAuthTest {
				t.Errorf("%s: RunClient = %v, want an IEAUTHTEST refusal", tc.name, err)
			}
			continue
		}
		if err != nil || r.Error != "" {
			t.Errorf("%s: RunClient = %v (%+v)", tc.name, err, r)
			continue
		}
		if got := tc.srv.waitResults(before + 1); got[len(got)-1].Receiver.Bytes == 0 {
			t.Errorf("%s: the server measured nothing", tc.name)
		}
	}
}

// TestIperf3ClientAuthConfig: client authentication the iperf3 client
// cannot use is a config error before anything is sent.
func TestIperf3ClientAuthConfig(t *testing.T) {
	f := newAuthFiles(t)
	for name, cfg := range map[string]session.ClientConfig{
		"iperf2 with secret":   {Host: "127.0.0.1", Auth: session.Iperf3ClientAuth{Secret: []byte("x")}},
		"username without key": {Host: "127.0.0.1", Dialect: session.DialectIperf3, Auth: session.Iperf3ClientAuth{Username: "a", Password: "b"}},
		"space in password":    {Host: "127.0.0.1", Dialect: session.DialectIperf3, Auth: f.client("alice", "two words")},
	} {
		if _, err := runClient(context.Background(), cfg); !session.IsConfigError(err) {
			t.Errorf("%s: RunClient = %v, want a config error", name, err)
		}
	}
}
