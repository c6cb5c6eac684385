package iperf2

import "fmt"

// Version words (client_hdrext version_u/version_l and CLIENTHDRACK): version_u = major<<16 | minor,
// version_l = patch<<16 | kind. wirebench announces iperf 2.1.8 release so that peers treat it as 2.1.8.
const (
	VersionU uint32 = 0x00020001 // 2.1
	VersionL uint32 = 0x00080003 // patch 8, kind 3 (release)
)

// VersionString formats version words as iperf prints them, e.g. "2.1.8" or "2.2.1-rc"; unknown kinds are shown
// as "-kindN". It returns "" when both words are zero (a peer that sent no version).
func VersionString(u, l uint32) string {
	if u == 0 && l == 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d.%d%s", u>>16, u&0xFFFF, l>>16, kindSuffix(l&0xFFFF))
}

// kindSuffix maps the version kind (0 dev, 1 rc, 2 rc2, 3 release, 4 private, 5 master) to a suffix.
func kindSuffix(kind uint32) string {
	switch kind {
	case 0:
		return "-dev"
	case 1:
		return "-rc"
	case 2:
		return "-rc2"
	case 3:
		return ""
	case 4:
		return "-private"
	case 5:
		return "-master"
	}
	return fmt.Sprintf("-kind%d", kind)
}
