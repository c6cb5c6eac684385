package iperf3

import (
	"bytes"
	"strings"
	"testing"
)

func FuzzParseAuthText(f *testing.F) {
	f.Add([]byte("user: alice\npwd:  secret\nts:   1700000000"))
	f.Add([]byte("user:\tbob\r\npwd: x\nts: -5\n"))
	f.Add([]byte("user: a\npwd: b\nts: 99999999999999999999"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseAuthText(b)
		if err != nil {
			return
		}
		text, err := AuthText(c)
		if err != nil {
			t.Fatalf("parsed %+v from %q, which AuthText refuses: %v", c, b, err)
		}
		c2, err := ParseAuthText([]byte(text))
		if err != nil || c2 != c {
			t.Fatalf("round trip of %+v: %+v, %v", c, c2, err)
		}
	})
}

func FuzzParseAuthorizedUsers(f *testing.F) {
	h := PasswordHash("alice", "secret")
	f.Add([]byte("# users\nalice,"+h+"\r\n,,bob,,"+h+",x\n"), "alice", "secret")
	f.Add([]byte("alice,\n"), "alice", "")
	f.Add([]byte("a,b,c\n\n\r\n"), "a", "b")
	f.Fuzz(func(t *testing.T, file []byte, user, pwd string) {
		u, err := ParseAuthorizedUsers(bytes.NewReader(file))
		if err != nil {
			return
		}
		if lines := bytes.Count(file, []byte("\n")) + 1; u.Len() > lines {
			t.Fatalf("%d entries from %d lines", u.Len(), lines)
		}
		if u.Check(user, pwd) == nil && !strings.Contains(string(file), user+","+PasswordHash(user, pwd)) &&
			!strings.Contains(string(file), PasswordHash(user, pwd)) {
			t.Fatalf("%q/%q accepted but the file does not hold its hash", user, pwd)
		}
	})
}

func FuzzDecodeAuthToken(f *testing.F) {
	k := authTestKey(f)
	for _, pad := range []Padding{PaddingPKCS1v15, PaddingOAEP} {
		tok, err := EncodeAuthToken(nil, &k.PublicKey, pad, Credentials{User: "alice", Password: "secret", Time: 1700000000})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(tok)
	}
	f.Add("")
	f.Add("====")
	f.Fuzz(func(t *testing.T, tok string) {
		c, err := DecodeAuthToken(tok, k)
		if err != nil {
			return
		}
		if _, err := AuthText(c); err != nil {
			t.Fatalf("decoded %+v, which AuthText refuses: %v", c, err)
		}
	})
}
