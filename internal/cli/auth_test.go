package cli

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testutil/authkeys"
	"github.com/wirebench/wirebench/internal/testutil/loopback"
)

// TestAuthUsageErrors: authentication flags that cannot work are usage
// errors, before anything is sent.
func TestAuthUsageErrors(t *testing.T) {
	f := authkeys.Write(t)
	t.Setenv(passwordEnv, "")
	os.Unsetenv(passwordEnv)
	t.Setenv(secretEnv, "")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"server", "--rsa-private-key-path", f.Private}, "needs both"},
		{[]string{"server", "--authorized-users-path", f.Users}, "needs both"},
		{[]string{"server", "--rsa-private-key-path", f.Public, "--authorized-users-path", f.Users}, "no PEM \"PRIVATE KEY\""},
		{[]string{"server", "--rsa-private-key-path", f.Private, "--authorized-users-path", f.Private}, "no username,sha256hex lines"},
		{[]string{"server", "--auth-secret", "x", "--time-skew-threshold", "0"}, "invalid --time-skew-threshold"},
		{[]string{"server", "--time-skew-threshold", "5"}, "needs --rsa-private-key-path or a shared secret"},
		{[]string{"client", "127.0.0.1", "-p", "5201", "--username", "alice"}, "needs both"},
		{[]string{"client", "127.0.0.1", "-p", "5201", "--rsa-padding", "none"}, `invalid --rsa-padding "none": want one of pkcs1, oaep`},
		{[]string{"client", "127.0.0.1", "-p", "5201", "--username", "alice", "--rsa-public-key-path", f.Private}, "-pubout"},
		// go test's stdin is not a terminal: no prompt, a hint instead.
		{[]string{"client", "127.0.0.1", "-p", "5201", "--username", "alice", "--rsa-public-key-path", f.Public}, "set IPERF3_PASSWORD"},
		{[]string{"client", "127.0.0.1", "--auth-secret", "x"}, "only by the iperf3 dialect"},
		{[]string{"client", "127.0.0.1", "--username", "alice", "--rsa-public-key-path", f.Public}, "add --dialect iperf3"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), tt.args, &out, &errb)
			if code != exitUsage || !strings.Contains(errb.String(), tt.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errb.String(), exitUsage, tt.want)
			}
		})
	}
}

// TestAuthClientServer runs "wirebench server" with RSA authentication and
// a shared secret (from WIREBENCH_SECRET), and "wirebench client" against
// it: the password from IPERF3_PASSWORD, the secret from the flag; a wrong
// password and a wrong secret fail with iperf3's message.
func TestAuthClientServer(t *testing.T) {
	f := authkeys.Write(t)
	port := strconv.Itoa(loopback.FreePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t.Setenv(secretEnv, "lab-secret")
	_, errOut, done := startServerCmd(ctx, t, []string{"server", "-B", "127.0.0.1", "-p", "0", "--iperf3-port", port,
		"--rsa-private-key-path", f.Private, "--authorized-users-path", f.Users}, "iperf3 clients also on")
	if want := "iperf3 tests must authenticate with RSA credentials of a user in " + f.Users + " or the shared secret"; !strings.Contains(errOut.String(), want) {
		t.Errorf("server log %q does not say %q", errOut.String(), want)
	}
	t.Setenv(secretEnv, "")
	client := func(password string, args ...string) (int, string) {
		t.Setenv(passwordEnv, password)
		var cout, cerr bytes.Buffer
		all := append([]string{"client", "127.0.0.1", "-p", port, "--dialect", "iperf3", "-t", "0.3", "--json"}, args...)
		code := run(ctx, all, &cout, &cerr)
		return code, cout.String() + cerr.String()
	}
	rsa := []string{"--username", "bob", "--rsa-public-key-path", f.Public}
	for _, tc := range []struct {
		name, password string
		args           []string
		code           int
	}{
		{"rsa", "hunter2", rsa, exitOK},
		{"rsa oaep", "hunter2", append([]string{"--rsa-padding", "oaep"}, rsa...), exitOK},
		{"secret", "", []string{"--auth-secret", "lab-secret"}, exitOK},
		{"wrong password", "hunter3", rsa, exitFailure},
		{"wrong secret", "", []string{"--auth-secret", "lab-secreT"}, exitFailure},
		{"nothing", "", nil, exitFailure},
	} {
		code, text := client(tc.password, tc.args...)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d:\n%s", tc.name, code, tc.code, text)
		}
		if tc.code == exitFailure && !strings.Contains(text, "test authorization failed (i_errno 142)") {
			t.Errorf("%s: output does not say \"test authorization failed (i_errno 142)\":\n%s", tc.name, text)
		}
	}
	cancel()
	<-done
}
