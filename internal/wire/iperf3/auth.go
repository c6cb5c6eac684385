package iperf3

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// iperf3 authentication (docs/auth.md; iperf_auth.c of iperf3 3.12):
//
//	authtoken = base64(RSA-encrypt(pub, "user: %s\npwd:  %s\nts:   %d"))
//
// The token travels in the "authtoken" parameter. The server decrypts it
// with its private key, refuses a timestamp more than the skew threshold
// (default 10 s) away from its clock, and looks the user up in the
// authorized-users file, one "username,sha256hex({username}password)" per
// line. Any failure is answered with SERVER_ERROR and i_errno 142
// (IEAUTHTEST), "test authorization failed".

// ErrAuth is wrapped by every authentication decoding or checking error.
var ErrAuth = errors.New("iperf3 authentication")

// Padding is the RSA encryption padding of an auth token.
type Padding uint8

// Paddings. iperf3 3.12–3.16 always use PKCS#1 v1.5; 3.17 and later use OAEP
// (SHA-1, OpenSSL's default) unless given --use-pkcs1-padding.
const (
	PaddingPKCS1v15 Padding = iota
	PaddingOAEP
)

// String returns "pkcs1" or "oaep".
func (p Padding) String() string {
	if p == PaddingOAEP {
		return "oaep"
	}
	return "pkcs1"
}

// ParsePadding parses "pkcs1" or "oaep".
func ParsePadding(s string) (Padding, error) {
	switch s {
	case "pkcs1":
		return PaddingPKCS1v15, nil
	case "oaep":
		return PaddingOAEP, nil
	}
	return 0, fmt.Errorf("%w: unknown RSA padding %q: want pkcs1 or oaep", ErrAuth, s)
}

// Limits on what authentication reads, from the wire or from files.
const (
	// DefaultSkewThreshold is iperf3's default --time-skew-threshold, in
	// seconds.
	DefaultSkewThreshold = 10
	// MaxAuthTokenLen bounds the base64 token: the length for a 16384-bit
	// key's 2048-byte ciphertext.
	MaxAuthTokenLen = (16384/8 + 2) / 3 * 4
	// MaxKeyFileSize bounds a PEM key file.
	MaxKeyFileSize = 64 << 10
	// MaxUsersFileSize bounds an authorized-users file.
	MaxUsersFileSize = 1 << 20
	// maxUsersLine is iperf3's line buffer (fgets of 1024 bytes) less the
	// NUL: a longer line would be split there, so it is refused.
	maxUsersLine = 1023
)

// Credentials are the contents of an auth token.
type Credentials struct {
	User     string
	Password string
	Time     int64 // Unix seconds when the client made the token
}

// checkCredentialField says why s cannot travel in a token: iperf3 reads
// the fields back with sscanf's %s, which stops at whitespace.
func checkCredentialField(what, s string) error {
	if s == "" {
		return fmt.Errorf("%w: empty %s", ErrAuth, what)
	}
	if strings.ContainsFunc(s, isSpace) || strings.ContainsRune(s, 0) {
		return fmt.Errorf("%w: the %s contains whitespace or NUL, which iperf3 servers cannot read back", ErrAuth, what)
	}
	return nil
}

// isSpace is C's isspace in the "C" locale.
func isSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\v' || r == '\f' || r == '\r'
}

// AuthText returns the plaintext of a token for c.
func AuthText(c Credentials) (string, error) {
	if err := checkCredentialField("username", c.User); err != nil {
		return "", err
	}
	if err := checkCredentialField("password", c.Password); err != nil {
		return "", err
	}
	return "user: " + c.User + "\npwd:  " + c.Password + "\nts:   " + strconv.FormatInt(c.Time, 10), nil
}

// ParseAuthText parses a token's plaintext: the three labelled fields
// separated by whitespace, as iperf3's sscanf reads them. Like C, it stops
// at a NUL.
func ParseAuthText(b []byte) (Credentials, error) {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	f := strings.FieldsFunc(string(b), isSpace)
	if len(f) != 6 || f[0] != "user:" || f[2] != "pwd:" || f[4] != "ts:" {
		return Credentials{}, fmt.Errorf("%w: token text is not \"user: U\\npwd:  P\\nts:   T\"", ErrAuth)
	}
	ts, err := strconv.ParseInt(f[5], 10, 64)
	if err != nil {
		return Credentials{}, fmt.Errorf("%w: token timestamp %q: %w", ErrAuth, f[5], err)
	}
	return Credentials{User: f[1], Password: f[3], Time: ts}, nil
}

// EncodeAuthToken encrypts c for the server's public key and returns the
// base64 token (standard alphabet, padded, one line). rnd is crypto/rand
// when nil.
func EncodeAuthToken(rnd io.Reader, pub *rsa.PublicKey, pad Padding, c Credentials) (string, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	text, err := AuthText(c)
	if err != nil {
		return "", err
	}
	var ct []byte
	if pad == PaddingOAEP {
		ct, err = rsa.EncryptOAEP(sha1.New(), rnd, pub, []byte(text), nil)
	} else {
		ct, err = rsa.EncryptPKCS1v15(rnd, pub, []byte(text))
	}
	if err != nil {
		return "", fmt.Errorf("%w: encrypting the token (%d bytes of text, %d-bit key): %w", ErrAuth, len(text), pub.N.BitLen(), err)
	}
	return base64.StdEncoding.EncodeToString(ct), nil
}

// DecodeAuthToken decrypts a token with the server's private key. It accepts
// both paddings: OAEP is tried first (a PKCS#1 v1.5 ciphertext fails its
// hash check), then PKCS#1 v1.5, so iperf3 3.12–3.16 and 3.17+ clients are
// both understood. Every failure wraps ErrAuth.
func DecodeAuthToken(token string, priv *rsa.PrivateKey) (Credentials, error) {
	if len(token) > MaxAuthTokenLen {
		return Credentials{}, fmt.Errorf("%w: token of %d bytes, limit %d", ErrAuth, len(token), MaxAuthTokenLen)
	}
	ct, err := base64.StdEncoding.DecodeString(token)
	if err != nil {
		return Credentials{}, fmt.Errorf("%w: token is not base64: %w", ErrAuth, err)
	}
	if len(ct) != priv.Size() {
		return Credentials{}, fmt.Errorf("%w: token of %d bytes for a %d-byte key", ErrAuth, len(ct), priv.Size())
	}
	text, err := rsa.DecryptOAEP(sha1.New(), nil, priv, ct, nil)
	if err != nil {
		text, err = rsa.DecryptPKCS1v15(nil, priv, ct)
	}
	if err != nil {
		return Credentials{}, fmt.Errorf("%w: token does not decrypt with this private key", ErrAuth)
	}
	return ParseAuthText(text)
}

// CheckTime refuses a token time more than skew seconds from now.
func CheckTime(c Credentials, now time.Time, skew int64) error {
	d := now.Unix() - c.Time
	if d > skew || d < -skew {
		return fmt.Errorf("%w: token time is %d s from ours, threshold %d s", ErrAuth, d, skew)
	}
	return nil
}

// PasswordHash returns what the authorized-users file holds for a user:
// lower-case hex of sha256("{user}password").
func PasswordHash(user, password string) string {
	sum := passwordSum(user, password)
	return hex.EncodeToString(sum[:])
}

// passwordSum is sha256("{user}password"), the hash PasswordHash prints.
func passwordSum(user, password string) [sha256.Size]byte {
	return sha256.Sum256([]byte("{" + user + "}" + password))
}

// AuthorizedUsers is a parsed authorized-users file.
type AuthorizedUsers struct {
	entries []userEntry
}

type userEntry struct {
	user string
	hash [sha256.Size]byte
}

// Len returns the number of entries.
func (u *AuthorizedUsers) Len() int { return len(u.entries) }

// ParseAuthorizedUsers reads an authorized-users file the way iperf3 does:
// each line is cut at its first CR or LF; empty lines, lines without a comma
// and lines starting with '#' are skipped; the rest are split at commas,
// empty fields dropped (strtok), and the first two fields are the username
// and the password hash. Where iperf3 would misread or crash (a line over
// 1023 bytes, a user without a hash) or silently never match (a hash that
// is not 64 lower-case hex digits), this is an error naming the line.
func ParseAuthorizedUsers(r io.Reader) (*AuthorizedUsers, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxUsersFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading the authorized users: %w", err)
	}
	if len(data) > MaxUsersFileSize {
		return nil, fmt.Errorf("%w: authorized-users file larger than %d bytes", ErrAuth, MaxUsersFileSize)
	}
	u := &AuthorizedUsers{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, MaxUsersFileSize+1)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if len(line) > maxUsersLine {
			return nil, fmt.Errorf("%w: authorized users line %d: %d bytes, iperf3 reads at most %d", ErrAuth, n, len(line), maxUsersLine)
		}
		if i := strings.IndexAny(line, "\r\n"); i >= 0 {
			line = line[:i]
		}
		if line == "" || line[0] == '#' || !strings.Contains(line, ",") {
			continue
		}
		f := strings.FieldsFunc(line, func(r rune) bool { return r == ',' })
		if len(f) < 2 {
			return nil, fmt.Errorf("%w: authorized users line %d: want username,sha256hex", ErrAuth, n)
		}
		e := userEntry{user: f[0]}
		if len(f[1]) != 2*sha256.Size || strings.ToLower(f[1]) != f[1] {
			return nil, fmt.Errorf("%w: authorized users line %d: the hash is not 64 lower-case hex digits", ErrAuth, n)
		}
		if _, err := hex.Decode(e.hash[:], []byte(f[1])); err != nil {
			return nil, fmt.Errorf("%w: authorized users line %d: the hash is not 64 lower-case hex digits", ErrAuth, n)
		}
		u.entries = append(u.entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the authorized users: %w", err)
	}
	return u, nil
}

// Check reports whether user and password match an entry. The hash
// comparison takes the same time wherever the hashes differ.
func (u *AuthorizedUsers) Check(user, password string) error {
	sum := passwordSum(user, password)
	known := false
	for _, e := range u.entries {
		if e.user != user {
			continue
		}
		known = true
		if subtle.ConstantTimeCompare(e.hash[:], sum[:]) == 1 {
			return nil
		}
	}
	if !known {
		return fmt.Errorf("%w: unknown user %q", ErrAuth, user)
	}
	return fmt.Errorf("%w: wrong password for user %q", ErrAuth, user)
}

// ParseRSAPublicKeyPEM reads an RSA public key from PEM: "PUBLIC KEY"
// (PKIX, what `openssl rsa -pubout` writes and iperf3 reads) or "RSA PUBLIC
// KEY" (PKCS#1). Text around the PEM block is ignored.
func ParseRSAPublicKeyPEM(b []byte) (*rsa.PublicKey, error) {
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return nil, fmt.Errorf("%w: no PEM \"PUBLIC KEY\" block found", ErrAuth)
		}
		switch blk.Type {
		case "PUBLIC KEY":
			k, err := x509.ParsePKIXPublicKey(blk.Bytes)
			if err != nil {
				return nil, fmt.Errorf("%w: parsing the public key: %w", ErrAuth, err)
			}
			rk, ok := k.(*rsa.PublicKey)
			if !ok {
				return nil, fmt.Errorf("%w: the public key is %T, not RSA", ErrAuth, k)
			}
			return rk, nil
		case "RSA PUBLIC KEY":
			k, err := x509.ParsePKCS1PublicKey(blk.Bytes)
			if err != nil {
				return nil, fmt.Errorf("%w: parsing the public key: %w", ErrAuth, err)
			}
			return k, nil
		case "PRIVATE KEY", "RSA PRIVATE KEY", "ENCRYPTED PRIVATE KEY":
			return nil, fmt.Errorf("%w: this is a private key; the client needs the public key (openssl rsa -in KEY -pubout)", ErrAuth)
		}
	}
}

// ParseRSAPrivateKeyPEM reads an RSA private key from PEM: "PRIVATE KEY"
// (PKCS#8, what `openssl genrsa` 3.x writes) or "RSA PRIVATE KEY" (PKCS#1,
// `openssl genrsa -traditional` and OpenSSL 1.x). Encrypted keys are
// refused with a hint.
func ParseRSAPrivateKeyPEM(b []byte) (*rsa.PrivateKey, error) {
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return nil, fmt.Errorf("%w: no PEM \"PRIVATE KEY\" block found", ErrAuth)
		}
		var k any
		var err error
		switch blk.Type {
		case "PRIVATE KEY":
			k, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
		case "RSA PRIVATE KEY":
			if _, enc := blk.Headers["DEK-Info"]; enc {
				return nil, fmt.Errorf("%w: the private key is encrypted; write a plain copy with openssl rsa -in KEY -out PLAIN", ErrAuth)
			}
			k, err = x509.ParsePKCS1PrivateKey(blk.Bytes)
		case "ENCRYPTED PRIVATE KEY":
			return nil, fmt.Errorf("%w: the private key is encrypted; write a plain copy with openssl rsa -in KEY -out PLAIN", ErrAuth)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%w: parsing the private key: %w", ErrAuth, err)
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("%w: the private key is %T, not RSA", ErrAuth, k)
		}
		return rk, nil
	}
}

// SecretMAC is the wirebench shared-secret proof of one test: lower-case
// hex of HMAC-SHA256(secret, cookie || decimal Unix time). It travels in the
// wb_auth parameter with the time in wb_auth_ts.
func SecretMAC(secret []byte, ck Cookie, ts int64) string {
	m := hmac.New(sha256.New, secret)
	m.Write(ck[:])
	m.Write(strconv.AppendInt(nil, ts, 10))
	return hex.EncodeToString(m.Sum(nil))
}

// CheckSecretMAC checks a wb_auth value against the secret, cookie and time
// (constant time).
func CheckSecretMAC(secret []byte, ck Cookie, ts int64, mac string) error {
	want := SecretMAC(secret, ck, ts)
	if subtle.ConstantTimeCompare([]byte(want), []byte(mac)) != 1 {
		return fmt.Errorf("%w: wrong or missing shared-secret proof", ErrAuth)
	}
	return nil
}
