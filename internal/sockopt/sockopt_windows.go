package sockopt

import "golang.org/x/sys/windows"

var (
	soReuseAddr = opt{-1, -1} // on windows it lets another socket take the port over
	soSndBuf    = opt{windows.SOL_SOCKET, windows.SO_SNDBUF}
	soRcvBuf    = opt{windows.SOL_SOCKET, windows.SO_RCVBUF}
	tcpMaxSeg   = opt{windows.IPPROTO_TCP, windows.TCP_MAXSEG}
	tcpNoDelay  = opt{windows.IPPROTO_TCP, windows.TCP_NODELAY}
	ipTOS       = opt{windows.IPPROTO_IP, windows.IP_TOS}
	ipTTL       = opt{windows.IPPROTO_IP, windows.IP_TTL}
	ipv6TClass  = opt{-1, -1} // not in x/sys/windows; Windows sets DSCP through its QoS API
	ipv6Hops    = opt{windows.IPPROTO_IPV6, windows.IPV6_UNICAST_HOPS}
)

// kernelDoubles: Windows reports the buffer size it was given.
const kernelDoubles = false

func setsockoptInt(fd uintptr, level, name, v int) error {
	return windows.SetsockoptInt(windows.Handle(fd), level, name, v)
}

func getsockoptInt(fd uintptr, level, name int) (int, error) {
	return windows.GetsockoptInt(windows.Handle(fd), level, name)
}

func setCongestion(uintptr, string) error { return errUnsupported }

func sysctlMax(string) (int, bool) { return 0, false }
