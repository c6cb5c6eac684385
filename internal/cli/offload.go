package cli

import "github.com/spf13/cobra"

// offloadFlags switch off UDP segmentation and receive offload, which are
// on by default where the kernel has them; shared by client and server.
type offloadFlags struct {
	noGSO, noGRO bool
}

func (o *offloadFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&o.noGSO, "no-gso", false, "UDP: send without segmentation offload (UDP_SEGMENT, on by default on Linux): one buffer per datagram handed to the kernel")
	fl.BoolVar(&o.noGRO, "no-gro", false, "UDP: receive without receive offload (UDP_GRO, on by default on Linux), so each datagram keeps its own arrival time for jitter (slower at high rates)")
}
