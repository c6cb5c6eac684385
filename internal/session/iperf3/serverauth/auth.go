// Package serverauth is what an iperf3 server asks of a test before
// running it (docs/auth.md): iperf3's RSA token for a user of an
// authorized-users file, or a proof of wirebench's shared secret, each
// checked against the clock skew allowed and a bounded replay guard.
package serverauth

import (
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

// Auth is what an iperf3 server asks of a test before running it. Each configured way in is enough on its own: a valid
// iperf3 RSA token for a user of UsersPath, or a valid proof of Secret.
// Build it with New.
type Auth struct {
	privateKey *rsa.PrivateKey
	usersPath  string // re-read for every test, as iperf3 does
	skew       int64  // seconds
	secret     []byte
	now        func() time.Time

	mu   sync.Mutex
	seen map[[sha256.Size]byte]time.Time // proofs accepted, until they expire
}

// ConfigError is a mistake in Config: the options given cannot work (as
// opposed to a file that could not be read for another reason).
type ConfigError struct{ Err error }

func (e ConfigError) Error() string { return e.Err.Error() }
func (e ConfigError) Unwrap() error { return e.Err }

// IsConfigError says whether err is, or wraps, a ConfigError.
func IsConfigError(err error) bool {
	var ce ConfigError
	return errors.As(err, &ce)
}

// maxSeenProofs bounds the replay guard: this many tests authenticated
// within the skew window refuse further ones until the oldest expire.
const maxSeenProofs = 4096

// Config configures New.
type Config struct {
	// PrivateKeyPath and UsersPath turn on iperf3's RSA authentication
	// (--rsa-private-key-path, --authorized-users-path); both or neither.
	PrivateKeyPath string
	UsersPath      string
	// SkewThreshold is the largest clock difference accepted, in seconds
	// (0 = iperf3's default of 10).
	SkewThreshold int64
	// Secret turns on the wirebench shared secret (nil = off).
	Secret []byte
}

// New loads the key and checks the users file. It returns nil and
// no error when nothing is configured.
func New(cfg Config) (*Auth, error) {
	if (cfg.PrivateKeyPath == "") != (cfg.UsersPath == "") {
		return nil, ConfigError{Err: errors.New("iperf3 authentication needs both --rsa-private-key-path and --authorized-users-path")}
	}
	if cfg.SkewThreshold < 0 {
		return nil, ConfigError{Err: errors.New("the time skew threshold must be a positive number of seconds")}
	}
	if cfg.PrivateKeyPath == "" && len(cfg.Secret) == 0 {
		if cfg.SkewThreshold != 0 {
			return nil, ConfigError{Err: errors.New("--time-skew-threshold needs --rsa-private-key-path or a shared secret")}
		}
		return nil, nil
	}
	a := &Auth{usersPath: cfg.UsersPath, skew: cfg.SkewThreshold, secret: cfg.Secret, now: time.Now,
		seen: map[[sha256.Size]byte]time.Time{}}
	if a.skew == 0 {
		a.skew = i3wire.DefaultSkewThreshold
	}
	if cfg.PrivateKeyPath != "" {
		b, err := readBounded(cfg.PrivateKeyPath, i3wire.MaxKeyFileSize)
		if err != nil {
			return nil, ConfigError{Err: fmt.Errorf("reading the RSA private key: %w", err)}
		}
		if a.privateKey, err = i3wire.ParseRSAPrivateKeyPEM(b); err != nil {
			return nil, ConfigError{Err: fmt.Errorf("%s: %w", cfg.PrivateKeyPath, err)}
		}
		u, err := a.users()
		if err != nil {
			return nil, ConfigError{Err: err}
		}
		if u.Len() == 0 {
			return nil, ConfigError{Err: fmt.Errorf("%s has no username,sha256hex lines: every test would be refused", cfg.UsersPath)}
		}
	}
	return a, nil
}

// readBounded reads a file of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return b, nil
}

// users reads the authorized-users file.
func (a *Auth) users() (*i3wire.AuthorizedUsers, error) {
	f, err := os.Open(a.usersPath)
	if err != nil {
		return nil, fmt.Errorf("opening the authorized users: %w", err)
	}
	defer f.Close()
	u, err := i3wire.ParseAuthorizedUsers(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.usersPath, err)
	}
	return u, nil
}

// Authorize checks the parameters of the test with cookie ck. The error
// says why it is refused, for the server's log only: the client is told
// IEAUTHTEST whatever the reason. On success it returns who got in
// ("user alice" or "shared secret").
func (a *Auth) Authorize(ck i3wire.Cookie, p *i3wire.Params) (string, error) {
	now := a.now()
	var errs []error
	if a.privateKey != nil {
		who, err := a.checkToken(p.AuthToken, now)
		if err == nil {
			return who, a.once(p.AuthToken, now)
		}
		errs = append(errs, err)
	}
	if len(a.secret) > 0 {
		err := a.checkSecret(ck, p.WB, now)
		if err == nil {
			return "shared secret", a.once(ck.String(), now)
		}
		errs = append(errs, err)
	}
	return "", errors.Join(errs...)
}

func (a *Auth) checkToken(token string, now time.Time) (string, error) {
	if token == "" {
		return "", fmt.Errorf("%w: no authtoken in the parameters", i3wire.ErrAuth)
	}
	c, err := i3wire.DecodeAuthToken(token, a.privateKey)
	if err != nil {
		return "", err
	}
	if err := i3wire.CheckTime(c, now, a.skew); err != nil {
		return "", fmt.Errorf("user %q: %w", c.User, err)
	}
	u, err := a.users()
	if err != nil {
		return "", err
	}
	if err := u.Check(c.User, c.Password); err != nil {
		return "", err
	}
	return "user " + c.User, nil
}

func (a *Auth) checkSecret(ck i3wire.Cookie, wb *i3wire.WBParams, now time.Time) error {
	if wb == nil || wb.AuthMAC == "" {
		return fmt.Errorf("%w: no shared-secret proof (wb_auth) in the parameters", i3wire.ErrAuth)
	}
	if err := i3wire.CheckTime(i3wire.Credentials{Time: wb.AuthTime}, now, a.skew); err != nil {
		return err
	}
	return i3wire.CheckSecretMAC(a.secret, ck, wb.AuthTime, wb.AuthMAC)
}

// once refuses a proof already accepted within the skew window: a token or
// a MAC seen on the network cannot start a second test. Entries are kept
// for twice the threshold, as long as a proof can pass CheckTime.
func (a *Auth) once(proof string, now time.Time) error {
	k := sha256.Sum256([]byte(proof))
	a.mu.Lock()
	defer a.mu.Unlock()
	for p, exp := range a.seen {
		if now.After(exp) {
			delete(a.seen, p)
		}
	}
	if _, ok := a.seen[k]; ok {
		return fmt.Errorf("%w: proof already used by an earlier test (replay)", i3wire.ErrAuth)
	}
	if len(a.seen) >= maxSeenProofs {
		return fmt.Errorf("%w: %d tests authenticated within %d s; refusing more until they age out", i3wire.ErrAuth, maxSeenProofs, 2*a.skew)
	}
	a.seen[k] = now.Add(time.Duration(2*a.skew) * time.Second)
	return nil
}
