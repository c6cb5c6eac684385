// Package labgrid reserves a board through a labgrid coordinator (labgrid
// 24 and later, gRPC) and opens its serial console: it acquires the place,
// finds the NetworkSerialPort among the place's acquired resources,
// connects to it over raw TCP or telnet with RFC 2217 (as ser2net serves
// it on the exporter) and releases the place when done.
//
// Client is the coordinator session (generated from lgpb's
// coordinator.proto); RFC2217 is the console connection; Open puts them
// together into a Board, the io.ReadWriteCloser that internal/dut drives
// for --dut labgrid:PLACE[@HOST:PORT].
package labgrid
