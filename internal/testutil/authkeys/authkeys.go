// Package authkeys writes the files of an iperf3 server that asks for
// authentication: an RSA key pair in the PEM forms OpenSSL 3 writes and an
// authorized-users file. It is for tests only.
package authkeys

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/wirebench/wirebench/internal/wire/iperf3"
)

// The users in every authorized-users file written here, with their
// passwords.
var Users = map[string]string{"alice": "secret", "bob": "hunter2"}

var (
	keyOnce sync.Once
	key     *rsa.PrivateKey
	keyErr  error
)

// Files are the paths of one set of files, and the key they hold.
type Files struct {
	Key     *rsa.PrivateKey
	Private string // PKCS#8 "PRIVATE KEY", as `openssl genrsa` writes
	Public  string // PKIX "PUBLIC KEY", as `openssl rsa -pubout` writes
	Users   string // "username,sha256hex({username}password)" lines
}

// Write writes the files into a fresh temporary directory of t. The 2048-bit
// key is made once per test binary.
func Write(t testing.TB) Files {
	t.Helper()
	keyOnce.Do(func() { key, keyErr = rsa.GenerateKey(rand.Reader, 2048) })
	if keyErr != nil {
		t.Fatalf("generating an RSA key: %v", keyErr)
	}
	dir := t.TempDir()
	f := Files{Key: key, Private: filepath.Join(dir, "private.pem"), Public: filepath.Join(dir, "public.pem"),
		Users: filepath.Join(dir, "users.csv")}
	p8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pkix, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	users := "# username,sha256({username}password)\n"
	for _, u := range []string{"alice", "bob"} {
		users += u + "," + iperf3.PasswordHash(u, Users[u]) + "\n"
	}
	for path, b := range map[string][]byte{
		f.Private: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p8}),
		f.Public:  pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix}),
		f.Users:   []byte(users),
	} {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return f
}
