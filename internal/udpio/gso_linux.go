package udpio

// gsoState is the seam for UDP generic segmentation and receive offload.
//
// Not implemented yet. The plan, from libraries.md and wireguard-go's
// conn/gso_linux.go:
//   - send (UDP_SEGMENT): coalesce consecutive same-destination, same-size
//     messages into one buffer with a 2-byte UDP_SEGMENT cmsg (u16 segment
//     size), at most 64 segments; probe at open (setsockopt UDP_SEGMENT),
//     switch off and resend plainly on EIO; report Capabilities.GSO.
//   - receive (UDP_GRO): setsockopt UDP_GRO=1, read the 4-byte UDP_GRO cmsg
//     (int segment size) with parseOOB and split the buffer into Messages.
//     All coalesced segments share one timestamp, so jitter measurement needs
//     a no-GRO option.
//
// batchConn.WriteBatch would consult gso between packTx and sendmmsg, and
// ReadBatch would split after recvmmsg; oobSpace already leaves room for the
// GRO cmsg.
type gsoState struct{}
