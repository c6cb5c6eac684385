package iperf2

import (
	"fmt"
	"net/netip"

	"github.com/wirebench/wirebench/internal/admit"
)

// reverseRefused is the error of an iperf 2 test in which the server was
// to send to us (UDP -R; -r/-d connect-back, UDP and TCP) and nothing came:
// how says what we saw. iperf 2 has no message for a refusal, so a
// wirebench server refusing the test under its reverse-traffic policy
// (docs/server.md) looks like this and nothing else; the error names that
// policy and the flag that allows this client, whose address local is.
func reverseRefused(how string, local fmt.Stringer) string {
	src := "ADDRESS"
	if ap, err := netip.ParseAddrPort(local.String()); err == nil {
		src = ap.Addr().Unmap().WithZone("").String()
	}
	return fmt.Sprintf("%s. A wirebench server does that when its reverse-traffic policy refuses this client "+
		"(iperf 2 cannot carry the reason; the server's log has it): it sends UDP reverse and connect-back traffic "+
		"only to sources on %s networks or in its --allow-reverse, never to those in its --deny-reverse. "+
		"To allow this client: wirebench server --allow-reverse %s", how, admit.LocalClassesBrief, src)
}
