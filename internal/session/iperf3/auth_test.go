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
	"github.com/wirebench/wirebench/internal/testutil/authkeys"
	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

// authFiles are the key and users files of an authenticating server.
type authFiles struct{ authkeys.Files }

func newAuthFiles(t *testing.T) authFiles { return authFiles{authkeys.Write(t)} }

func (f authFiles) server(t *testing.T, secret []byte) *Auth {
	t.Helper()
	a, err := NewAuth(AuthConfig{PrivateKeyPath: f.Private, UsersPath: f.Users, Secret: secret})
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
	secretAuth, err := NewAuth(AuthConfig{Secret: []byte("s")})
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
	secretAuth, err := NewAuth(AuthConfig{Secret: secret})
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

// TestIperf3AuthorizeRefusals covers, at the check itself, what a client
// cannot easily send: a stale or future timestamp, a replayed token or
// MAC, an unreadable token; and that the users file is re-read per test.
func TestIperf3AuthorizeRefusals(t *testing.T) {
	f := newAuthFiles(t)
	a := f.server(t, []byte("s"))
	now := time.Unix(1_800_000_000, 0)
	a.now = func() time.Time { return now }
	ck, err := i3wire.NewCookie(nil)
	if err != nil {
		t.Fatal(err)
	}
	token := func(user, pw string, ts time.Time) *i3wire.Params {
		c := f.client(user, pw)
		p := &i3wire.Params{}
		if err := c.Apply(p, ck, ts); err != nil {
			t.Fatal(err)
		}
		return p
	}
	secret := func(s string, ts time.Time) *i3wire.Params {
		p := &i3wire.Params{}
		c := session.Iperf3ClientAuth{Secret: []byte(s)}
		if err := c.Apply(p, ck, ts); err != nil {
			t.Fatal(err)
		}
		return p
	}
	check := func(name string, p *i3wire.Params, want string) {
		t.Helper()
		who, err := a.authorize(ck, p)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: refused: %v", name, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: authorize = %q, %v; want an error containing %q", name, who, err, want)
		}
	}
	fresh := token("alice", "secret", now.Add(-10*time.Second))
	check("10 s old", fresh, "")
	check("the same token again", fresh, "replay")
	check("11 s old", token("alice", "secret", now.Add(-11*time.Second)), "threshold 10 s")
	check("11 s ahead", token("alice", "secret", now.Add(11*time.Second)), "threshold 10 s")
	check("garbage token", &i3wire.Params{AuthToken: "AAAA"}, "token of 3 bytes")
	mac := secret("s", now.Add(5*time.Second))
	check("secret 5 s ahead", mac, "")
	check("the same MAC again", mac, "replay")
	check("stale secret", secret("s", now.Add(-60*time.Second)), "threshold 10 s")

	// The file is read for every test, as iperf3 does: a user removed
	// from it is refused at once.
	if err := os.WriteFile(f.Users, []byte("bob,"+i3wire.PasswordHash("bob", "hunter2")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	check("alice removed", token("alice", "secret", now), `unknown user "alice"`)
	check("bob still there", token("bob", "hunter2", now), "")
	if err := os.WriteFile(f.Users, []byte("bob,XYZ\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	check("broken users file", token("bob", "hunter2", now), "line 1")
}

func TestNewIperf3AuthConfig(t *testing.T) {
	f := newAuthFiles(t)
	if a, err := NewAuth(AuthConfig{}); a != nil || err != nil {
		t.Errorf("nothing configured: %v, %v; want nil, nil", a, err)
	}
	for name, cfg := range map[string]AuthConfig{
		"key without users":   {PrivateKeyPath: f.Private},
		"users without key":   {UsersPath: f.Users},
		"public key as key":   {PrivateKeyPath: f.Public, UsersPath: f.Users},
		"missing key file":    {PrivateKeyPath: f.Private + ".nope", UsersPath: f.Users},
		"missing users file":  {PrivateKeyPath: f.Private, UsersPath: f.Users + ".nope"},
		"skew without auth":   {SkewThreshold: 5},
		"negative skew":       {PrivateKeyPath: f.Private, UsersPath: f.Users, SkewThreshold: -1},
		"users file is a key": {PrivateKeyPath: f.Private, UsersPath: f.Private},
	} {
		if _, err := NewAuth(cfg); !session.IsConfigError(err) {
			t.Errorf("%s: NewAuth = %v, want a config error", name, err)
		}
	}
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

// TestIperf3AuthReplayGuardBounded: the replay guard holds at most
// maxSeenProofs proofs, refuses more while they are fresh, and forgets them
// after twice the skew threshold.
func TestIperf3AuthReplayGuardBounded(t *testing.T) {
	a, err := NewAuth(AuthConfig{Secret: []byte("s")})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	for i := range maxSeenProofs {
		if err := a.once(strconv.Itoa(i), now); err != nil {
			t.Fatalf("proof %d: %v", i, err)
		}
	}
	if err := a.once("one more", now.Add(19*time.Second)); err == nil || !strings.Contains(err.Error(), "refusing more") {
		t.Fatalf("proof %d within the window: %v, want a refusal", maxSeenProofs+1, err)
	}
	if err := a.once("one more", now.Add(21*time.Second)); err != nil {
		t.Fatalf("after 2×10 s the old proofs expire: %v", err)
	}
	if len(a.seen) != 1 {
		t.Errorf("%d proofs remembered, want 1", len(a.seen))
	}
}
