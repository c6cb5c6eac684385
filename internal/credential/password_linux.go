package credential

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// readPassword prompts on w and reads one line from stdin with echo off,
// as iperf3 does when IPERF3_PASSWORD is not set. It fails when stdin is
// not a terminal: a password is never read from a pipe by surprise. Echo is
// back on when it returns, also when ctx ends first (Ctrl-C at the prompt).
func readPassword(ctx context.Context, w io.Writer) (string, error) {
	fd := int(os.Stdin.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return "", ErrNoTerminal
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
	type line struct {
		s   string
		err error
	}
	got := make(chan line, 1)
	go func() {
		s, err := bufio.NewReader(os.Stdin).ReadString('\n')
		got <- line{s, err}
	}()
	select {
	case l := <-got:
		if l.err != nil && !errors.Is(l.err, io.EOF) {
			return "", fmt.Errorf("reading the password: %w", l.err)
		}
		return strings.TrimRight(l.s, "\r\n"), nil
	case <-ctx.Done():
		return "", fmt.Errorf("reading the password: %w", ctx.Err())
	}
}
