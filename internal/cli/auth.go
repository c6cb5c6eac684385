package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/session"
	iperf3session "github.com/wirebench/wirebench/internal/session/iperf3"
	"github.com/wirebench/wirebench/internal/wire/iperf3"
)

// Environment variables read for authentication (docs/auth.md).
const (
	passwordEnv = "IPERF3_PASSWORD" // iperf3's own
	secretEnv   = "WIREBENCH_SECRET"
)

// errNoPassword is returned when no password can be had without echoing it.
var errNoPassword = usagef("--username needs a password: set %s (stdin is not a terminal to ask on)", passwordEnv)

// secretFlag is --auth-secret, shared by client and server.
type secretFlag struct{ secret string }

func (f *secretFlag) register(cmd *cobra.Command, what string) {
	cmd.Flags().StringVar(&f.secret, "auth-secret", "", what+"; "+secretEnv+" is read when this is not given (safer: argv is visible to other users)")
}

// value returns the secret from the flag or the environment (nil = none).
func (f *secretFlag) value() []byte {
	if f.secret != "" {
		return []byte(f.secret)
	}
	if s := os.Getenv(secretEnv); s != "" {
		return []byte(s)
	}
	return nil
}

// clientAuthFlags are the client's authentication flags.
type clientAuthFlags struct {
	username string
	pubKey   string
	padding  string
	secretFlag
}

func (f *clientAuthFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.username, "username", "", "iperf3: username for authentication; the password comes from "+passwordEnv+" or a prompt")
	fl.StringVar(&f.pubKey, "rsa-public-key-path", "", "iperf3: the server's RSA public key (PEM) to encrypt the credentials with")
	fl.StringVar(&f.padding, "rsa-padding", "pkcs1", "iperf3: RSA padding of the credentials: pkcs1 (iperf3 3.12-3.16 servers, wirebench) or oaep (iperf3 3.17+ servers)")
	f.secretFlag.register(cmd, "iperf3: prove this shared secret to a wirebench server run with the same --auth-secret")
}

// resolve loads the key and the password for a test in dialect; the
// password prompt, if any, goes to e.stderr.
func (f *clientAuthFlags) resolve(e *env, dialect string) (session.Iperf3ClientAuth, error) {
	a := session.Iperf3ClientAuth{Username: f.username, Secret: f.value()}
	if err := enumFlag("--rsa-padding", f.padding, "pkcs1", "oaep"); err != nil {
		return a, err
	}
	pad, err := iperf3.ParsePadding(f.padding)
	if err != nil {
		return a, usageError{err}
	}
	a.Padding = pad
	if f.username == "" && f.pubKey == "" {
		return a, nil
	}
	if dialect != session.DialectIperf3 {
		// Before asking for a password that could not be used.
		return a, usagef("--username and --rsa-public-key-path are iperf3 authentication: add --dialect iperf3 (or -p 5201)")
	}
	if f.username == "" || f.pubKey == "" {
		return a, usagef("iperf3 authentication needs both --username and --rsa-public-key-path")
	}
	b, err := os.ReadFile(f.pubKey)
	if err != nil {
		return a, usagef("reading the RSA public key: %v", err)
	}
	if a.PublicKey, err = iperf3.ParseRSAPublicKeyPEM(b); err != nil {
		return a, usagef("%s: %v", f.pubKey, err)
	}
	if pw, ok := os.LookupEnv(passwordEnv); ok {
		a.Password = pw
	} else if a.Password, err = readPassword(e.ctx, e.stderr); err != nil {
		return a, err
	}
	return a, nil
}

// serverAuthFlags are the server's authentication flags.
type serverAuthFlags struct {
	privKey string
	users   string
	skew    int
	secretFlag
}

func (f *serverAuthFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.privKey, "rsa-private-key-path", "", "iperf3: RSA private key (PEM) that decrypts clients' credentials; with --authorized-users-path, iperf3 tests must authenticate")
	fl.StringVar(&f.users, "authorized-users-path", "", "iperf3: file of username,sha256(\"{username}password\") lines, re-read for every test")
	fl.IntVar(&f.skew, "time-skew-threshold", 0, "iperf3: largest clock difference accepted in a credential, seconds (default 10)")
	f.secretFlag.register(cmd, "iperf3: refuse iperf3 tests that do not prove this shared secret (wirebench clients with the same --auth-secret); iperf2 tests are not covered")
}

// resolve builds the server's authentication (nil when none).
func (f *serverAuthFlags) resolve(cmd *cobra.Command) (*iperf3session.Auth, error) {
	if cmd.Flags().Changed("time-skew-threshold") && f.skew <= 0 {
		return nil, usagef("invalid --time-skew-threshold %d: want seconds > 0", f.skew)
	}
	a, err := iperf3session.NewAuth(iperf3session.AuthConfig{
		PrivateKeyPath: f.privKey, UsersPath: f.users, SkewThreshold: int64(f.skew), Secret: f.value(),
	})
	if err != nil {
		if session.IsConfigError(err) {
			return nil, usageError{err}
		}
		return nil, fmt.Errorf("setting up authentication: %w", err)
	}
	return a, nil
}

// describe says what the server's authentication covers, for its log.
func (f *serverAuthFlags) describe(a *iperf3session.Auth) string {
	if a == nil {
		return ""
	}
	var ways []string
	if f.privKey != "" {
		ways = append(ways, "RSA credentials of a user in "+f.users)
	}
	if f.value() != nil {
		ways = append(ways, "the shared secret")
	}
	return "iperf3 tests must authenticate with " + strings.Join(ways, " or ") + "; iperf2-dialect tests are not authenticated"
}
