//go:build unix

package sockopt

import "golang.org/x/sys/unix"

var (
	soReuseAddr = opt{unix.SOL_SOCKET, unix.SO_REUSEADDR}
	soSndBuf    = opt{unix.SOL_SOCKET, unix.SO_SNDBUF}
	soRcvBuf    = opt{unix.SOL_SOCKET, unix.SO_RCVBUF}
	tcpMaxSeg   = opt{unix.IPPROTO_TCP, unix.TCP_MAXSEG}
	tcpNoDelay  = opt{unix.IPPROTO_TCP, unix.TCP_NODELAY}
	ipTOS       = opt{unix.IPPROTO_IP, unix.IP_TOS}
	ipTTL       = opt{unix.IPPROTO_IP, unix.IP_TTL}
	ipv6TClass  = opt{unix.IPPROTO_IPV6, unix.IPV6_TCLASS}
	ipv6Hops    = opt{unix.IPPROTO_IPV6, unix.IPV6_UNICAST_HOPS}
)

func setsockoptInt(fd uintptr, level, name, v int) error {
	return unix.SetsockoptInt(int(fd), level, name, v)
}

func getsockoptInt(fd uintptr, level, name int) (int, error) {
	return unix.GetsockoptInt(int(fd), level, name)
}
