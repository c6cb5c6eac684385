// Package credential turns the authentication flags, as typed, into the
// credentials an iperf3 test proves (the client's) or checks (the
// server's): RSA keys, the password from the environment or an echo-free
// prompt, and wirebench's shared secret (docs/auth.md).
package credential

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf3/serverauth"
	"github.com/wirebench/wirebench/internal/wire/iperf3"
)

// Environment variables read for authentication.
const (
	PasswordEnv = "IPERF3_PASSWORD" // iperf3's own
	SecretEnv   = "WIREBENCH_SECRET"
)

// ErrNoTerminal is Password's error when the password is not in the
// environment and stdin is no terminal to ask on.
var ErrNoTerminal = errors.New("stdin is not a terminal to ask for the password on")

// Secret is the shared secret given as flag, else from SecretEnv (nil =
// none).
func Secret(flag string) []byte {
	if flag != "" {
		return []byte(flag)
	}
	if s := os.Getenv(SecretEnv); s != "" {
		return []byte(s)
	}
	return nil
}

// Password is the password from PasswordEnv, else read from stdin with
// echo off after a prompt on w (ErrNoTerminal when it is no terminal).
func Password(ctx context.Context, w io.Writer) (string, error) {
	if pw, ok := os.LookupEnv(PasswordEnv); ok {
		return pw, nil
	}
	return readPassword(ctx, w)
}

// ClientOptions are the client's authentication flags, as typed.
type ClientOptions struct {
	Username, PublicKeyPath, Padding, Secret string
}

// Check checks what of the options does not depend on the dialect, so
// that a mistake is said before any traffic (the probe that picks the
// dialect opens a connection).
func (o ClientOptions) Check() error {
	if o.Padding != "pkcs1" && o.Padding != "oaep" {
		return fmt.Errorf("invalid --rsa-padding %q: want one of pkcs1, oaep", o.Padding)
	}
	return nil
}

// Auth checks the options for a test in dialect and returns the
// credentials, but for the password; needPassword says whether the
// password is needed (Password). Every error is a mistake in the options.
func (o ClientOptions) Auth(dialect string) (a session.Iperf3ClientAuth, needPassword bool, err error) {
	a = session.Iperf3ClientAuth{Username: o.Username, Secret: Secret(o.Secret)}
	if err := o.Check(); err != nil {
		return a, false, err
	}
	if a.Padding, err = iperf3.ParsePadding(o.Padding); err != nil {
		return a, false, err
	}
	if o.Username == "" && o.PublicKeyPath == "" {
		return a, false, nil
	}
	if dialect != session.DialectIperf3 {
		// Before asking for a password that could not be used.
		return a, false, errors.New("--username and --rsa-public-key-path are iperf3 authentication: add --dialect iperf3 (or -p 5201)")
	}
	if o.Username == "" || o.PublicKeyPath == "" {
		return a, false, errors.New("iperf3 authentication needs both --username and --rsa-public-key-path")
	}
	b, err := os.ReadFile(o.PublicKeyPath)
	if err != nil {
		return a, false, fmt.Errorf("reading the RSA public key: %v", err)
	}
	if a.PublicKey, err = iperf3.ParseRSAPublicKeyPEM(b); err != nil {
		return a, false, fmt.Errorf("%s: %v", o.PublicKeyPath, err)
	}
	return a, true, nil
}

// ServerOptions are the server's authentication flags, as typed.
type ServerOptions struct {
	PrivateKeyPath, UsersPath string
	// Skew is --time-skew-threshold in seconds; SkewSet says it was given.
	Skew    int
	SkewSet bool
	Secret  string
}

// Auth checks the options and builds the server's authentication (nil
// when none); mistake says whether an error is a mistake in the options.
func (o ServerOptions) Auth() (a *serverauth.Auth, mistake bool, err error) {
	if o.SkewSet && o.Skew <= 0 {
		return nil, true, fmt.Errorf("invalid --time-skew-threshold %d: want seconds > 0", o.Skew)
	}
	a, err = serverauth.New(serverauth.Config{
		PrivateKeyPath: o.PrivateKeyPath, UsersPath: o.UsersPath, SkewThreshold: int64(o.Skew), Secret: Secret(o.Secret),
	})
	if err != nil {
		if serverauth.IsConfigError(err) {
			return nil, true, err
		}
		return nil, false, fmt.Errorf("setting up authentication: %w", err)
	}
	return a, false, nil
}

// Describe says what the server's authentication a covers, for its log
// ("" for none).
func (o ServerOptions) Describe(a *serverauth.Auth) string {
	if a == nil {
		return ""
	}
	var ways []string
	if o.PrivateKeyPath != "" {
		ways = append(ways, "RSA credentials of a user in "+o.UsersPath)
	}
	if Secret(o.Secret) != nil {
		ways = append(ways, "the shared secret")
	}
	return "iperf3 tests must authenticate with " + strings.Join(ways, " or ") + "; iperf2-dialect tests are not authenticated"
}
