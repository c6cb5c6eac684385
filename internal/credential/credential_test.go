package credential

import (
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/session"
)

// TestClientOptionsAuth: mistakes in the client's flags are found before
// a password is asked for, and without a username nothing is needed.
func TestClientOptionsAuth(t *testing.T) {
	t.Setenv(SecretEnv, "from-env")
	a, need, err := ClientOptions{Padding: "oaep"}.Auth(session.DialectIperf3)
	if err != nil || need || string(a.Secret) != "from-env" {
		t.Errorf("no username: %+v, %v, %v", a, need, err)
	}
	for _, tt := range []struct {
		o       ClientOptions
		dialect string
		want    string
	}{
		{ClientOptions{Padding: "none"}, session.DialectIperf3, `invalid --rsa-padding "none"`},
		{ClientOptions{Padding: "pkcs1", Username: "alice", PublicKeyPath: "k.pem"}, "iperf2", "add --dialect iperf3"},
		{ClientOptions{Padding: "pkcs1", Username: "alice"}, session.DialectIperf3, "needs both"},
		{ClientOptions{Padding: "pkcs1", Username: "alice", PublicKeyPath: t.TempDir() + "/none.pem"}, session.DialectIperf3, "reading the RSA public key"},
	} {
		if _, _, err := tt.o.Auth(tt.dialect); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: got %v, want %q", tt.o, err, tt.want)
		}
	}
}

// TestServerOptionsAuth: a skew given without a positive value is a
// mistake; a shared secret alone is authentication, and Describe says so.
func TestServerOptionsAuth(t *testing.T) {
	t.Setenv(SecretEnv, "")
	if _, mistake, err := (ServerOptions{Secret: "s", SkewSet: true}).Auth(); !mistake || err == nil {
		t.Errorf("--time-skew-threshold 0: %v, %v", mistake, err)
	}
	if a, _, err := (ServerOptions{}).Auth(); a != nil || err != nil {
		t.Errorf("nothing asked: %v, %v", a, err)
	}
	o := ServerOptions{Secret: "s"}
	a, _, err := o.Auth()
	if err != nil || a == nil {
		t.Fatalf("secret: %v, %v", a, err)
	}
	if d := o.Describe(a); !strings.Contains(d, "the shared secret") || strings.Contains(d, "RSA") {
		t.Errorf("Describe: %q", d)
	}
}
