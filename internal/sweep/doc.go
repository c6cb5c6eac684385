// Package sweep finds, for each datagram size, the highest rate a device or
// path carries within a loss criterion, the way RFC 2544's throughput test
// does with a hardware generator, but over ordinary sockets: a loop of
// trials through the Runner interface. It never opens a socket itself;
// the runners in this package adapt sessions (a reflector run, a wirebench
// or iperf2 UDP test) to that interface, and the search, the cliff
// bisection and the statistics are tested with a fake runner.
//
// Per size, a search starts at the highest rate asked for (the medium's
// maximum packet rate, or --max-rate), jumps below the rate the far end
// delivered when a trial fails, gallops up and bisects until the passing
// and the failing rate are within Config.Resolution, then confirms the
// result with one more trial at it, Config.Confirm long (RFC 2544 uses
// 60 s); a rate whose confirmation fails is not reported, and the search
// goes on below it. The rate reported is what the far end delivered in the
// confirming trial (its count over its own receive window), not what we
// offered, with the length of the trial it held for. A trial passes only
// when
//
//   - its loss is within the criterion,
//   - the far end received at the pace we sent (its receive window was not
//     longer than our send window by more than Config.PaceTolerance, 0.5 %:
//     the queue grew by no more than that, so the rate we offered exceeds
//     the rate it delivered by no more; a queue that fills during the trial
//     would drop in a longer one), and
//   - this host really offered the rate asked for (no send errors, at
//     least 99 % of the rate): a trial this host could not send is marked
//     host_limited and never counts as a pass, and a size whose search
//     ended at such a trial is reported as limited by this host.
//
// Between neighbouring sizes the byte rate should rise; where it falls by
// more than Config.CliffDrop the sizes in between are bisected down to the
// byte, and the cliff gets a hint computed from the sizes and the rates
// (a buffer that holds k datagrams below the cliff and k−1 above it, an
// MTU boundary).
package sweep
