package result

// Device is what the device under test printed on its own shell about the
// same test (wirebench --dut): its role, the figures parsed from its report
// and the report text itself. A figure the device did not print is absent
// (nil), never zero.
type Device struct {
	// Shell is the adapter that drove the device: zephyr, esp-idf,
	// harmony or lwip.
	Shell string `json:"shell"`
	// Role is the device's side of the test: "server" or "client".
	Role string `json:"role"`
	// Firmware is the firmware as the adapter detected it, when it tells
	// syntaxes apart (e.g. "Zephyr 3.4.0 (zperf 3.x syntax)").
	Firmware string `json:"firmware,omitempty"`
	// BitsPerSecond is the device's rate in bit/s, as printed.
	BitsPerSecond *float64 `json:"bits_per_second,omitempty"`
	// Packets is the device's packet count: datagrams received (server)
	// or the count of its final report line (client; see docs/dut.md for
	// what each firmware counts).
	Packets *int64 `json:"packets,omitempty"`
	// Lost and OutOfOrder are the device's loss and reordering counts.
	Lost       *int64 `json:"lost,omitempty"`
	OutOfOrder *int64 `json:"out_of_order,omitempty"`
	// JitterMS is the device's jitter in milliseconds.
	JitterMS *float64 `json:"jitter_ms,omitempty"`
	// Seconds is the duration the device printed for its report.
	Seconds *float64 `json:"seconds,omitempty"`
	// Raw is the report as the device printed it, one line per line.
	Raw string `json:"raw,omitempty"`
	// Error says why the device's figures are missing or incomplete
	// (no answer, reset, line dropped, unparsable report).
	Error string `json:"error,omitempty"`
	// Transcript is the session with the device's shell, both
	// directions, timestamped (see docs/dut.md).
	Transcript []string `json:"transcript,omitempty"`
}
