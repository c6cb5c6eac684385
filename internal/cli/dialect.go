package cli

import "github.com/wirebench/wirebench/internal/probe"

// dialectFlagHelp is the --dialect flag's help line.
const dialectFlagHelp = "wire dialect `NAME`: iperf2, iperf2-legacy, raw, iperf3 or auto (default: iperf2 on port 5001, iperf3 on 5201, else auto: " +
	"a short TCP exchange tells an iperf3 server from iperf 2.1+; device dialects are never guessed)"

// announceDialect says a probed choice on stderr (text output).
func announceDialect(e *env, c probe.DialectChoice) {
	if c.Probed() {
		e.logf("%s", c.Line())
	}
}
