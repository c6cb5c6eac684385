package udpio

import "unsafe"

// unsafePointerOf is the address of b's first byte, for laying out a cmsghdr.
func unsafePointerOf(b []byte) unsafe.Pointer { return unsafe.Pointer(&b[0]) }
