package serverauth

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/testutil/authkeys"
	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

// authFiles are the key and users files of an authenticating server.
type authFiles struct{ authkeys.Files }

func newAuthFiles(t *testing.T) authFiles { return authFiles{authkeys.Write(t)} }

func (f authFiles) server(t *testing.T, secret []byte) *Auth {
	t.Helper()
	a, err := New(Config{PrivateKeyPath: f.Private, UsersPath: f.Users, Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func (f authFiles) client(user, password string) session.Iperf3ClientAuth {
	return session.Iperf3ClientAuth{Username: user, Password: password, PublicKey: &f.Key.PublicKey}
}

// TestAuthorizeRefusals covers, at the check itself, what a client
// cannot easily send: a stale or future timestamp, a replayed token or
// MAC, an unreadable token; and that the users file is re-read per test.
func TestAuthorizeRefusals(t *testing.T) {
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
		who, err := a.Authorize(ck, p)
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

// TestNewConfig: nothing configured is no authentication; every
// incomplete or unreadable configuration is a config error.
func TestNewConfig(t *testing.T) {
	f := newAuthFiles(t)
	if a, err := New(Config{}); a != nil || err != nil {
		t.Errorf("nothing configured: %v, %v; want nil, nil", a, err)
	}
	for name, cfg := range map[string]Config{
		"key without users":   {PrivateKeyPath: f.Private},
		"users without key":   {UsersPath: f.Users},
		"public key as key":   {PrivateKeyPath: f.Public, UsersPath: f.Users},
		"missing key file":    {PrivateKeyPath: f.Private + ".nope", UsersPath: f.Users},
		"missing users file":  {PrivateKeyPath: f.Private, UsersPath: f.Users + ".nope"},
		"skew without auth":   {SkewThreshold: 5},
		"negative skew":       {PrivateKeyPath: f.Private, UsersPath: f.Users, SkewThreshold: -1},
		"users file is a key": {PrivateKeyPath: f.Private, UsersPath: f.Private},
	} {
		if _, err := New(cfg); !IsConfigError(err) {
			t.Errorf("%s: New = %v, want a config error", name, err)
		}
	}
}

// TestReplayGuardBounded: the replay guard holds at most
// maxSeenProofs proofs, refuses more while they are fresh, and forgets them
// after twice the skew threshold.
func TestReplayGuardBounded(t *testing.T) {
	a, err := New(Config{Secret: []byte("s")})
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
