package iperf3

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	testKeyOnce sync.Once
	testKey     *rsa.PrivateKey
)

// authTestKey is one 2048-bit key shared by the tests of this package.
func authTestKey(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	testKeyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		testKey = k
	})
	return testKey
}

// TestPasswordHash is a known answer: printf '%s' '{alice}secret' | sha256sum.
func TestPasswordHash(t *testing.T) {
	const want = "27b307f21eb6137ab56a3c80a93a5db840e79a697f80f3381c87edaa79a83f6f"
	if got := PasswordHash("alice", "secret"); got != want {
		t.Fatalf("PasswordHash = %s, want %s", got, want)
	}
}

func TestAuthTextIsIperf3Format(t *testing.T) {
	got, err := AuthText(Credentials{User: "alice", Password: "s3cr,et", Time: 1700000000})
	if err != nil {
		t.Fatal(err)
	}
	if want := "user: alice\npwd:  s3cr,et\nts:   1700000000"; got != want {
		t.Fatalf("AuthText = %q, want %q", got, want)
	}
	for _, c := range []Credentials{{User: "", Password: "p"}, {User: "a b", Password: "p"}, {User: "a", Password: "p\tq"}, {User: "a", Password: ""}} {
		if _, err := AuthText(c); !errors.Is(err, ErrAuth) {
			t.Errorf("AuthText(%+v) = %v, want an ErrAuth error", c, err)
		}
	}
}

func TestParseAuthText(t *testing.T) {
	good := map[string]Credentials{
		"user: alice\npwd:  secret\nts:   1700000000": {"alice", "secret", 1700000000},
		"user:\tbob\r\npwd: x\nts: -5\n":              {"bob", "x", -5},
	}
	for in, want := range good {
		got, err := ParseAuthText([]byte(in))
		if err != nil || got != want {
			t.Errorf("ParseAuthText(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "user: a\npwd: b", "user: a\npwd: b\nts: x", "usr: a\npwd: b\nts: 1", "user: a\npwd: b\nts: 1 extra", "user: a\npwd: b\nts: 99999999999999999999"} {
		if _, err := ParseAuthText([]byte(in)); !errors.Is(err, ErrAuth) {
			t.Errorf("ParseAuthText(%q) = %v, want an ErrAuth error", in, err)
		}
	}
}

func TestAuthTokenRoundTrip(t *testing.T) {
	k := authTestKey(t)
	c := Credentials{User: "alice", Password: "secret", Time: time.Now().Unix()}
	for _, pad := range []Padding{PaddingPKCS1v15, PaddingOAEP} {
		tok, err := EncodeAuthToken(nil, &k.PublicKey, pad, c)
		if err != nil {
			t.Fatalf("%v: %v", pad, err)
		}
		if strings.ContainsAny(tok, "\n\r") || len(tok) != base64.StdEncoding.EncodedLen(k.Size()) {
			t.Fatalf("%v: token %q is not one base64 line of a %d-byte ciphertext", pad, tok, k.Size())
		}
		got, err := DecodeAuthToken(tok, k)
		if err != nil || got != c {
			t.Fatalf("%v: DecodeAuthToken = %+v, %v; want %+v", pad, got, err, c)
		}
	}
}

func TestDecodeAuthTokenRefuses(t *testing.T) {
	k := authTestKey(t)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	c := Credentials{User: "alice", Password: "secret", Time: 1}
	foreign, err := EncodeAuthToken(nil, &other.PublicKey, PaddingPKCS1v15, c)
	if err != nil {
		t.Fatal(err)
	}
	good, err := EncodeAuthToken(nil, &k.PublicKey, PaddingPKCS1v15, c)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.StdEncoding.DecodeString(good)
	raw[len(raw)/2] ^= 1
	for name, tok := range map[string]string{
		"other key":  foreign,
		"flipped":    base64.StdEncoding.EncodeToString(raw),
		"short":      base64.StdEncoding.EncodeToString(raw[:10]),
		"not base64": "!!!!",
		"empty":      "",
		"too long":   strings.Repeat("A", MaxAuthTokenLen+4),
	} {
		if _, err := DecodeAuthToken(tok, k); !errors.Is(err, ErrAuth) {
			t.Errorf("%s: DecodeAuthToken = %v, want an ErrAuth error", name, err)
		}
	}
}

func TestCheckTime(t *testing.T) {
	now := time.Unix(1700000000, 0)
	for d, ok := range map[int64]bool{0: true, 10: true, -10: true, 11: false, -11: false, 1 << 40: false} {
		err := CheckTime(Credentials{Time: now.Unix() - d}, now, DefaultSkewThreshold)
		if (err == nil) != ok {
			t.Errorf("skew %d s: CheckTime = %v, want ok=%v", d, err, ok)
		}
	}
}

func TestParseAuthorizedUsers(t *testing.T) {
	alice := PasswordHash("alice", "secret")
	bob := PasswordHash("bob", "hunter2")
	file := "# comment,with comma\n" +
		"\n" +
		"no comma here\n" +
		"alice," + alice + "\r\n" +
		",,bob,," + bob + ",extra\n" + // strtok: empty fields vanish, extra ignored
		"alice," + PasswordHash("alice", "second") + "\n" // a user may have two entries
	u, err := ParseAuthorizedUsers(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if u.Len() != 3 {
		t.Fatalf("%d entries, want 3", u.Len())
	}
	for _, ok := range [][2]string{{"alice", "secret"}, {"alice", "second"}, {"bob", "hunter2"}} {
		if err := u.Check(ok[0], ok[1]); err != nil {
			t.Errorf("Check(%q, %q) = %v", ok[0], ok[1], err)
		}
	}
	for _, bad := range [][3]string{{"alice", "wrong", "wrong password"}, {"carol", "secret", "unknown user"}, {"Alice", "secret", "unknown user"}} {
		if err := u.Check(bad[0], bad[1]); err == nil || !strings.Contains(err.Error(), bad[2]) {
			t.Errorf("Check(%q, %q) = %v, want %q", bad[0], bad[1], err, bad[2])
		}
	}
	for name, in := range map[string]string{
		"no hash":        "alice,\n",
		"upper-case hex": "alice," + strings.ToUpper(alice) + "\n",
		"short hash":     "alice," + alice[:63] + "\n",
		"not hex":        "alice," + strings.Repeat("g", 64) + "\n",
		"long line":      "alice," + alice + "," + strings.Repeat("x", 1024) + "\n",
		"huge file":      strings.Repeat("#\n", MaxUsersFileSize/2+1),
	} {
		if _, err := ParseAuthorizedUsers(strings.NewReader(in)); !errors.Is(err, ErrAuth) {
			t.Errorf("%s: ParseAuthorizedUsers = %v, want an ErrAuth error", name, err)
		}
	}
}

func TestParseRSAKeysPEM(t *testing.T) {
	k := authTestKey(t)
	pkcs8, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	pkix, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	enc := func(typ string, b []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}) }
	for name, b := range map[string][]byte{
		"PKCS#8":             enc("PRIVATE KEY", pkcs8),
		"PKCS#1":             enc("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(k)),
		"text before, after": append(append([]byte("Bag Attributes\n"), enc("PRIVATE KEY", pkcs8)...), "trailer\n"...),
	} {
		got, err := ParseRSAPrivateKeyPEM(b)
		if err != nil || !got.Equal(k) {
			t.Errorf("%s private key: %v", name, err)
		}
	}
	for name, b := range map[string][]byte{
		"PKIX":   enc("PUBLIC KEY", pkix),
		"PKCS#1": enc("RSA PUBLIC KEY", x509.MarshalPKCS1PublicKey(&k.PublicKey)),
	} {
		got, err := ParseRSAPublicKeyPEM(b)
		if err != nil || !got.Equal(&k.PublicKey) {
			t.Errorf("%s public key: %v", name, err)
		}
	}
	for name, b := range map[string][]byte{
		"public as private": enc("PUBLIC KEY", pkix),
		"encrypted PKCS#8":  enc("ENCRYPTED PRIVATE KEY", []byte{1, 2, 3}),
		"garbage DER":       enc("PRIVATE KEY", []byte{1, 2, 3}),
		"not PEM":           []byte("hello"),
	} {
		if _, err := ParseRSAPrivateKeyPEM(b); !errors.Is(err, ErrAuth) {
			t.Errorf("%s: ParseRSAPrivateKeyPEM = %v, want an ErrAuth error", name, err)
		}
	}
	if _, err := ParseRSAPublicKeyPEM(enc("PRIVATE KEY", pkcs8)); err == nil || !strings.Contains(err.Error(), "-pubout") {
		t.Errorf("a private key given as public: %v, want a hint to use -pubout", err)
	}
}

func TestSecretMAC(t *testing.T) {
	ck, err := NewCookie(nil)
	if err != nil {
		t.Fatal(err)
	}
	mac := SecretMAC([]byte("s3"), ck, 100)
	if err := CheckSecretMAC([]byte("s3"), ck, 100, mac); err != nil {
		t.Fatal(err)
	}
	ck2 := ck
	ck2[0] ^= 1
	for name, err := range map[string]error{
		"wrong secret": CheckSecretMAC([]byte("s4"), ck, 100, mac),
		"other cookie": CheckSecretMAC([]byte("s3"), ck2, 100, mac),
		"other time":   CheckSecretMAC([]byte("s3"), ck, 101, mac),
		"missing":      CheckSecretMAC([]byte("s3"), ck, 100, ""),
	} {
		if !errors.Is(err, ErrAuth) {
			t.Errorf("%s: %v, want an ErrAuth error", name, err)
		}
	}
}

// TestAuthWithOpenSSL checks the key files and ciphertexts of the openssl
// binary (OpenSSL 3, as iperf3 links it): keys from `openssl genrsa` (PKCS#8)
// and `genrsa -traditional` (PKCS#1), `rsa -pubout`; tokens encrypted by
// `pkeyutl` decode here, and ours decrypt there, in both paddings.
func TestAuthWithOpenSSL(t *testing.T) {
	bin, err := exec.LookPath("openssl")
	if err != nil {
		t.Skipf("openssl not installed (%v): key files from openssl are not tested", err)
	}
	dir := t.TempDir()
	run := func(stdin string, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("openssl %v: %v", args, err)
		}
		return out
	}
	run("", "genrsa", "-out", "p8.pem", "2048")
	run("", "genrsa", "-traditional", "-out", "p1.pem", "2048")
	for _, f := range []string{"p8.pem", "p1.pem"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		priv, err := ParseRSAPrivateKeyPEM(b)
		if err != nil {
			t.Fatalf("%s (%s): %v", f, strings.SplitN(string(b), "\n", 2)[0], err)
		}
		pubPEM := run("", "rsa", "-in", f, "-pubout")
		pub, err := ParseRSAPublicKeyPEM(pubPEM)
		if err != nil || !pub.Equal(&priv.PublicKey) {
			t.Fatalf("%s -pubout: %v", f, err)
		}
		text := "user: alice\npwd:  secret\nts:   1700000000"
		for _, mode := range []string{"pkcs1", "oaep"} {
			ct := run(text, "pkeyutl", "-encrypt", "-inkey", f, "-pkeyopt", "rsa_padding_mode:"+mode)
			c, err := DecodeAuthToken(base64.StdEncoding.EncodeToString(ct), priv)
			if err != nil || c != (Credentials{"alice", "secret", 1700000000}) {
				t.Errorf("%s %s: openssl's token decodes to %+v, %v", f, mode, c, err)
			}
			pad, _ := ParsePadding(mode)
			tok, err := EncodeAuthToken(nil, pub, pad, Credentials{"alice", "secret", 1700000000})
			if err != nil {
				t.Fatal(err)
			}
			ours, _ := base64.StdEncoding.DecodeString(tok)
			if got := string(run(string(ours), "pkeyutl", "-decrypt", "-inkey", f, "-pkeyopt", "rsa_padding_mode:"+mode)); got != text {
				t.Errorf("%s %s: openssl decrypts our token to %q", f, mode, got)
			}
		}
	}
}
