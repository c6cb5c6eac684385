package cli

import (
	"errors"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/credential"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf3/serverauth"
)

// Environment variables read for authentication (docs/auth.md).
const (
	passwordEnv = credential.PasswordEnv
	secretEnv   = credential.SecretEnv
)

// errNoPassword is returned when no password can be had without echoing it.
var errNoPassword = usagef("--username needs a password: set %s (stdin is not a terminal to ask on)", passwordEnv)

// registerSecret adds --auth-secret, shared by client and server.
func registerSecret(cmd *cobra.Command, secret *string, what string) {
	cmd.Flags().StringVar(secret, "auth-secret", "", what+"; "+secretEnv+" is read when this is not given (safer: argv is visible to other users)")
}

// clientAuthFlags are the client's authentication flags.
type clientAuthFlags struct{ credential.ClientOptions }

func (f *clientAuthFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.Username, "username", "", "iperf3: username for authentication; the password comes from "+passwordEnv+" or a prompt")
	fl.StringVar(&f.PublicKeyPath, "rsa-public-key-path", "", "iperf3: the server's RSA public key (PEM) to encrypt the credentials with")
	fl.StringVar(&f.Padding, "rsa-padding", "pkcs1", "iperf3: RSA padding of the credentials: pkcs1 (iperf3 3.12-3.16 servers, wirebench) or oaep (iperf3 3.17+ servers)")
	registerSecret(cmd, &f.Secret, "iperf3: prove this shared secret to a wirebench server run with the same --auth-secret")
}

// resolve loads the key and the password for a test in dialect; the
// password prompt, if any, goes to e.stderr.
func (f *clientAuthFlags) resolve(e *env, dialect string) (session.Iperf3ClientAuth, error) {
	a, needPassword, err := f.Auth(dialect)
	if err != nil {
		return a, usageError{err}
	}
	if needPassword {
		a.Password, err = credential.Password(e.ctx, e.stderr)
		if errors.Is(err, credential.ErrNoTerminal) {
			return a, errNoPassword
		}
	}
	return a, err
}

// serverAuthFlags are the server's authentication flags.
type serverAuthFlags struct{ credential.ServerOptions }

func (f *serverAuthFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.PrivateKeyPath, "rsa-private-key-path", "", "iperf3: RSA private key (PEM) that decrypts clients' credentials; with --authorized-users-path, iperf3 tests must authenticate")
	fl.StringVar(&f.UsersPath, "authorized-users-path", "", "iperf3: file of username,sha256(\"{username}password\") lines, re-read for every test")
	fl.IntVar(&f.Skew, "time-skew-threshold", 0, "iperf3: largest clock difference accepted in a credential, seconds (default 10)")
	registerSecret(cmd, &f.Secret, "iperf3: refuse iperf3 tests that do not prove this shared secret (wirebench clients with the same --auth-secret); iperf2 tests are not covered")
}

// resolve builds the server's authentication (nil when none).
func (f *serverAuthFlags) resolve(cmd *cobra.Command) (*serverauth.Auth, error) {
	f.SkewSet = cmd.Flags().Changed("time-skew-threshold")
	a, mistake, err := f.Auth()
	if mistake {
		return nil, usageError{err}
	}
	return a, err
}
