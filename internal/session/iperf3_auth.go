package session

import (
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/wire/iperf3"
)

// Iperf3Auth is what an iperf3 server asks of a test before running it
// (docs/auth.md). Each configured way in is enough on its own: a valid
// iperf3 RSA token for a user of UsersPath, or a valid proof of Secret.
// Build it with NewIperf3Auth.
type Iperf3Auth struct {
	privateKey *rsa.PrivateKey
	usersPath  string // re-read for every test, as iperf3 does
	skew       int64  // seconds
	secret     []byte
	now        func() time.Time

	mu   sync.Mutex
	seen map[[sha256.Size]byte]time.Time // proofs accepted, until they expire
}

// maxSeenProofs bounds the replay guard: this many tests authenticated
// within the skew window refuse further ones until the oldest expire.
const maxSeenProofs = 4096

// Iperf3AuthConfig configures NewIperf3Auth.
type Iperf3AuthConfig struct {
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

// NewIperf3Auth loads the key and checks the users file. It returns nil and
// no error when nothing is configured.
func NewIperf3Auth(cfg Iperf3AuthConfig) (*Iperf3Auth, error) {
	if (cfg.PrivateKeyPath == "") != (cfg.UsersPath == "") {
		return nil, ConfigError{errors.New("iperf3 authentication needs both --rsa-private-key-path and --authorized-users-path")}
	}
	if cfg.SkewThreshold < 0 {
		return nil, ConfigError{errors.New("the time skew threshold must be a positive number of seconds")}
	}
	if cfg.PrivateKeyPath == "" && len(cfg.Secret) == 0 {
		if cfg.SkewThreshold != 0 {
			return nil, ConfigError{errors.New("--time-skew-threshold needs --rsa-private-key-path or a shared secret")}
		}
		return nil, nil
	}
	a := &Iperf3Auth{usersPath: cfg.UsersPath, skew: cfg.SkewThreshold, secret: cfg.Secret, now: time.Now,
		seen: map[[sha256.Size]byte]time.Time{}}
	if a.skew == 0 {
		a.skew = iperf3.DefaultSkewThreshold
	}
	if cfg.PrivateKeyPath != "" {
		b, err := readBounded(cfg.PrivateKeyPath, iperf3.MaxKeyFileSize)
		if err != nil {
			return nil, ConfigError{fmt.Errorf("reading the RSA private key: %w", err)}
		}
		if a.privateKey, err = iperf3.ParseRSAPrivateKeyPEM(b); err != nil {
			return nil, ConfigError{fmt.Errorf("%s: %w", cfg.PrivateKeyPath, err)}
		}
		u, err := a.users()
		if err != nil {
			return nil, ConfigError{err}
		}
		if u.Len() == 0 {
			return nil, ConfigError{fmt.Errorf("%s has no username,sha256hex lines: every test would be refused", cfg.UsersPath)}
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
func (a *Iperf3Auth) users() (*iperf3.AuthorizedUsers, error) {
	f, err := os.Open(a.usersPath)
	if err != nil {
		return nil, fmt.Errorf("opening the authorized users: %w", err)
	}
	defer f.Close()
	u, err := iperf3.ParseAuthorizedUsers(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.usersPath, err)
	}
	return u, nil
}

// authorize checks the parameters of the test with cookie ck. The error
// says why it is refused, for the server's log only: the client is told
// IEAUTHTEST whatever the reason. On success it returns who got in
// ("user alice" or "shared secret").
func (a *Iperf3Auth) authorize(ck iperf3.Cookie, p *iperf3.Params) (string, error) {
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

func (a *Iperf3Auth) checkToken(token string, now time.Time) (string, error) {
	if token == "" {
		return "", fmt.Errorf("%w: no authtoken in the parameters", iperf3.ErrAuth)
	}
	c, err := iperf3.DecodeAuthToken(token, a.privateKey)
	if err != nil {
		return "", err
	}
	if err := iperf3.CheckTime(c, now, a.skew); err != nil {
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

func (a *Iperf3Auth) checkSecret(ck iperf3.Cookie, wb *iperf3.WBParams, now time.Time) error {
	if wb == nil || wb.AuthMAC == "" {
		return fmt.Errorf("%w: no shared-secret proof (wb_auth) in the parameters", iperf3.ErrAuth)
	}
	if err := iperf3.CheckTime(iperf3.Credentials{Time: wb.AuthTime}, now, a.skew); err != nil {
		return err
	}
	return iperf3.CheckSecretMAC(a.secret, ck, wb.AuthTime, wb.AuthMAC)
}

// once refuses a proof already accepted within the skew window: a token or
// a MAC seen on the network cannot start a second test. Entries are kept
// for twice the threshold, as long as a proof can pass CheckTime.
func (a *Iperf3Auth) once(proof string, now time.Time) error {
	k := sha256.Sum256([]byte(proof))
	a.mu.Lock()
	defer a.mu.Unlock()
	for p, exp := range a.seen {
		if now.After(exp) {
			delete(a.seen, p)
		}
	}
	if _, ok := a.seen[k]; ok {
		return fmt.Errorf("%w: proof already used by an earlier test (replay)", iperf3.ErrAuth)
	}
	if len(a.seen) >= maxSeenProofs {
		return fmt.Errorf("%w: %d tests authenticated within %d s; refusing more until they age out", iperf3.ErrAuth, maxSeenProofs, 2*a.skew)
	}
	a.seen[k] = now.Add(time.Duration(2*a.skew) * time.Second)
	return nil
}

// Iperf3ClientAuth is how an iperf3 client authenticates (docs/auth.md).
// The zero value sends nothing.
type Iperf3ClientAuth struct {
	// Username, Password and PublicKey make iperf3's RSA token
	// (--username, IPERF3_PASSWORD, --rsa-public-key-path).
	Username  string
	Password  string
	PublicKey *rsa.PublicKey
	// Padding is the RSA padding: PKCS#1 v1.5 for iperf3 3.12–3.16 servers,
	// OAEP for 3.17+ run without --use-pkcs1-padding. A wirebench server
	// takes either.
	Padding iperf3.Padding
	// Secret proves knowledge of a wirebench server's shared secret.
	Secret []byte
}

func (c *Iperf3ClientAuth) enabled() bool {
	return c.PublicKey != nil || c.Username != "" || len(c.Secret) > 0
}

// validate checks that the RSA fields come together and make a token
// (before anything is sent).
func (c *Iperf3ClientAuth) validate() error {
	if (c.Username != "") != (c.PublicKey != nil) {
		return errors.New("iperf3 authentication needs both --username and --rsa-public-key-path (and a password)")
	}
	return c.apply(&iperf3.Params{}, iperf3.Cookie{}, time.Now())
}

// apply puts the proofs into p for the test with cookie ck at time now.
func (c *Iperf3ClientAuth) apply(p *iperf3.Params, ck iperf3.Cookie, now time.Time) error {
	if c.PublicKey != nil {
		tok, err := iperf3.EncodeAuthToken(nil, c.PublicKey, c.Padding,
			iperf3.Credentials{User: c.Username, Password: c.Password, Time: now.Unix()})
		if err != nil {
			return fmt.Errorf("making the iperf3 auth token: %w", err)
		}
		p.AuthToken = tok
	}
	if len(c.Secret) > 0 {
		if p.WB == nil {
			p.WB = &iperf3.WBParams{Version: iperf3.WBVersion}
		}
		p.WB.AuthTime = now.Unix()
		p.WB.AuthMAC = iperf3.SecretMAC(c.Secret, ck, p.WB.AuthTime)
	}
	return nil
}
