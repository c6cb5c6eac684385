package session

import (
	"crypto/rsa"
	"errors"
	"fmt"
	"time"

	"github.com/wirebench/wirebench/internal/wire/iperf3"
)

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

// Enabled says the config carries any proof to send.
func (c *Iperf3ClientAuth) Enabled() bool {
	return c.PublicKey != nil || c.Username != "" || len(c.Secret) > 0
}

// Validate checks that the RSA fields come together and make a token
// (before anything is sent).
func (c *Iperf3ClientAuth) Validate() error {
	if (c.Username != "") != (c.PublicKey != nil) {
		return errors.New("iperf3 authentication needs both --username and --rsa-public-key-path (and a password)")
	}
	return c.Apply(&iperf3.Params{}, iperf3.Cookie{}, time.Now())
}

// Apply puts the proofs into p for the test with cookie ck at time now.
func (c *Iperf3ClientAuth) Apply(p *iperf3.Params, ck iperf3.Cookie, now time.Time) error {
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
