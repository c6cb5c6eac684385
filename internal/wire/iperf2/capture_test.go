package iperf2

// Golden bytes captured from the real iperf 2.1.8 (Debian package, "iperf version 2.1.8 (12 August 2022)") on
// 127.0.0.1 with a throwaway Python peer:
//
//   - capUDPClientFirst: first datagram (first 96 of 200 bytes) of `iperf -c 127.0.0.1 -u -p 15011 -t 1 -l 200
//     -b 20k`; capUDPClientRFirst: the same with `-r -L 15016` (port 15015).
//   - capUDPClientFINs: the first three FINs (16-byte headers) of that plain run, which sent 15 data datagrams.
//   - capTCPClientHdr / capTCPClientHdrR: the first 60 bytes of `iperf -c 127.0.0.1 -p 15012 -t 2` and of
//     `... -p 15017 -t 2 -R`.
//   - capReportModern: the 128-byte reply of `iperf -s -u -p 15013` to 10 datagrams of 200 bytes (ids 1..10,
//     16-byte header, flags 48010098) and a FIN with id -11. The server printed
//     "0.0000-0.1071 sec  2.15 KBytes   164 Kbits/sec   0.018 ms 0/11 (0%)".
//   - capFIN2 / capReportEcho: a second FIN (id -12) and the server's answer to it: an echo of that FIN's first
//     128 bytes, not a report (the section 1.5 quirk).
//   - capReportToLegacy: the reply of `iperf -s -u -p 15021` to a legacy client built with this codec (12-byte
//     header, v1 header with flags 0 at 12, ids 0..19 of 200 bytes, FIN -20). The server printed
//     "0.0000-0.1066 sec  3.91 KBytes   300 Kbits/sec   0.009 ms 0/20 (0%)": it still replies in the modern
//     layout (report at 16), and counted 20 datagrams = 4000 bytes (id 0 not counted, the FIN counted).
//     The modern counterpart (ids 1..20, FIN -21) printed 0/21 and 4200 bytes.
//   - capClientHdrAck: what `iperf -s -p 15014` wrote back after a 60-byte 40010078 header.

import "encoding/hex"

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

var (
	capUDPClientFirst = mustHex(
		"000000016b0cb21a000d937300000000480100980000000100003aa3000000c8" +
			"00000000ffffff9c000000000000000000000000000200010008000300000000" +
			"00004e2000000000000000000000000000000000000000000000000000000000")
	capUDPClientRFirst = mustHex(
		"000000016b0cb21e0006aab700000000c80100980000000100003aa8000000c8" +
			"00000000ffffff9c000000000000000000000000000200010008000300000000" +
			"00004e2000000000000000000000000000000000000000000000000000000000")
	capUDPClientFINs = []string{"fffffff06b0cb21c0000269effffffff", "ffffffef6b0cb21c0000269effffffff", "ffffffee6b0cb21c0000269effffffff"}
	capTCPClientHdr  = mustHex(
		"400100780000000100003aa40000000000000000ffffff380000000000000000" +
			"00000000000200010008000300000000000000000000000000000000")
	capTCPClientHdrR = mustHex(
		"440100780000000100003aa90000000000000000ffffff380000000000000000" +
			"04000000000200010008000300000000000000000000000000000000")
	capReportModern = mustHex(
		"0000000000000000000000000000000088000000000000000000089800000000" +
			"0001a27d00000000000000000000000b0000000000000011000000000000006e" +
			"000000000000010900000000000005b4000000000000008400004cf80002c63a" +
			"00000000fffffffd0000000b0000006600000001000000000000000000000000")
	capFIN2 = mustHex(
		"fffffff46b0cb2220006f5dcffffffff480100980000000100003aa500000000" +
			"00000000ffffff9c000000000000000000000000000200010008000300000000" +
			"0010000000000000000000000000000000000000000000000000000000000000" +
			"0000000000000000000000000000000000000000000000000000000000000000")
	capReportEcho = mustHex(
		"fffffff46b0cb2220006f5dcffffffff480100980000000100003aa500000000" +
			"00000000ffffff9c000000000000000000000000000200010008000300000000" +
			"0010000000000000000000000000000000000000000000000000000000000000" +
			"0000000000000000000000000000000000000000000000000000000000000000")
	capReportToLegacy = mustHex(
		"00000000000000000000000000000000880000000000000000000fa000000000" +
			"0001a06900000000000000000000001400000000000000080000000000000020" +
			"000000000000003f00000000000003a5000000000000002e000005be0008646f" +
			"000000000000000300000014000000bb00000001000000000000000000000000")
	capClientHdrAck = mustHex(
		"000000020000001c0000000000020001000800030000000000000000")
)
