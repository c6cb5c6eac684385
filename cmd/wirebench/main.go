// Command wirebench measures the network performance of devices and links:
// throughput, loss, jitter and latency, spoken in every iperf dialect a
// device already runs. See the README for the commands.
package main

import (
	"os"

	"github.com/wirebench/wirebench/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
