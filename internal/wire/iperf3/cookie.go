package iperf3

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
)

// Cookie layout (wire-protocols.md §4.1, §4.4): sent first on the control
// connection and on every TCP data stream.
//
//	0                                      35   36
//	+---------------------------------------+----+
//	| 36 chars of abcdefghijklmnopqrstuvwxyz234567 | 00 |
//	+---------------------------------------+----+
const (
	CookieChars = 36 // characters before the NUL
	CookieSize  = 37 // bytes on the wire, NUL included
	// CookieAlphabet is the character set iperf3 draws cookies from.
	CookieAlphabet = "abcdefghijklmnopqrstuvwxyz234567"
)

// ErrBadCookie is wrapped by errors for a malformed cookie.
var ErrBadCookie = errors.New("bad iperf3 cookie")

// Cookie identifies one test; it is the 36 characters without the NUL.
type Cookie [CookieChars]byte

// NewCookie draws a cookie from rnd (crypto/rand when rnd is nil).
func NewCookie(rnd io.Reader) (Cookie, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	var c Cookie
	if _, err := io.ReadFull(rnd, c[:]); err != nil {
		return Cookie{}, fmt.Errorf("drawing iperf3 cookie: %w", err)
	}
	for i, b := range c {
		c[i] = CookieAlphabet[b&31] // 256 is a multiple of 32: no bias
	}
	return c, nil
}

// ParseCookie validates the 37 wire bytes of a cookie: 36 characters from
// CookieAlphabet and a NUL.
func ParseCookie(b []byte) (Cookie, error) {
	if len(b) != CookieSize {
		return Cookie{}, fmt.Errorf("%w: %d bytes, want %d", ErrBadCookie, len(b), CookieSize)
	}
	if b[CookieChars] != 0 {
		return Cookie{}, fmt.Errorf("%w: no NUL at byte %d", ErrBadCookie, CookieChars)
	}
	var c Cookie
	for i := range CookieChars {
		if !isCookieChar(b[i]) {
			return Cookie{}, fmt.Errorf("%w: byte %d is %#02x", ErrBadCookie, i, b[i])
		}
		c[i] = b[i]
	}
	return c, nil
}

// isCookieChar reports whether b belongs to CookieAlphabet.
func isCookieChar(b byte) bool {
	return (b >= 'a' && b <= 'z') || (b >= '2' && b <= '7')
}

// LooksLikeCookie reports whether prefix could be the start of a cookie: every
// byte so far is a cookie character, or the NUL at position 36. Dialect
// detection uses it on the first bytes of a connection.
func LooksLikeCookie(prefix []byte) bool {
	for i, b := range prefix {
		switch {
		case i < CookieChars && isCookieChar(b):
		case i == CookieChars && b == 0:
		default:
			return false
		}
	}
	return true
}

// String returns the 36 characters.
func (c Cookie) String() string { return string(c[:]) }

// AppendWire appends the 37 wire bytes of c to b.
func (c Cookie) AppendWire(b []byte) []byte {
	b = append(b, c[:]...)
	return append(b, 0)
}
