// Package dut drives the device under test through its own shell — a serial
// console, a telnet port or any program whose stdin/stdout is the shell
// (cmd:) — so that one wirebench run can start the device's built-in iperf
// as server or client, run wirebench's side, and put the device's own
// figures beside wirebench's.
//
// A Session is one line-oriented conversation with the shell: it recognises
// the prompt, bounds every step with a timeout, notices a reset (the boot
// banner), garbage and a dropped line, and keeps a timestamped transcript
// of both directions. An Adapter knows one firmware's commands and report
// format: zephyr (zperf), esp-idf (iperf example / iperf-cmd), harmony
// (Microchip Harmony TCP/IP iperf) and lwip (an lwiperf shell); "auto"
// picks one from the banner or the help text.
//
// The calls other packages use (cli's client, server, matrix and sweep
// --dut) are Open, Session.StartServer / StartClient / Wait / Stop,
// RunDeviceServer / RunDeviceClient, which pair a device role with
// wirebench's own session, Session.Check (can the firmware take a test at
// all) and ReceivedCounts (a device server's received and lost datagrams,
// for judging loss when no report comes back).
package dut
