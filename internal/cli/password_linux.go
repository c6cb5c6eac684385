package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// readPassword prompts on w and reads one line from stdin with echo off,
// as iperf3 does when IPERF3_PASSWORD is not set. It fails when stdin is
// not a terminal: a password is never read from a pipe by surprise.
func readPassword(w io.Writer) (string, error) {
	fd := int(os.Stdin.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return "", errNoPassword
	}
	noEcho := *old
	noEcho.Lflag &^= unix.ECHO
	if err := unix.IoctlSetTermios(fd, unix.TCSETSF, &noEcho); err != nil {
		return "", fmt.Errorf("turning off echo for the password: %w", err)
	}
	defer func() {
		_ = unix.IoctlSetTermios(fd, unix.TCSETSF, old)
		fmt.Fprintln(w)
	}()
	fmt.Fprint(w, "Password: ")
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("reading the password: %w", err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}
