#!/usr/bin/env bash
# bench/sidebyside.sh: wirebench, iperf 2 and iperf3 side by side on
# loopback, from one run: loss-free UDP rate (the same binary search for
# each) at 18, 64 and 1470 bytes, and with -P 2 at 64 and 1470 bytes
# (wirebench and iperf 2), highest paced send rate, TCP with 1, 2, 4
# and 8 streams (interleaved rounds, medians), CPU seconds per GB (every
# TCP row and the UDP send-rate rows), pacing error at 0.1-1000 Mbit/s,
# and 1000 clients at once against one wirebench server (--many N to
# scale, 0 to skip). Prints a table, or one JSON document with --json.
#
#   bench/sidebyside.sh --quick          # about 4 minutes
#   bench/sidebyside.sh                  # full, about 13 minutes
#   bench/sidebyside.sh --quick --json   # JSON instead of the table
#   bench/sidebyside.sh --only many      # the 1000 clients only
#
# It builds wirebench from this tree and bench/sidebyside into a fresh
# /tmp directory (WB_BENCH_OUT to choose one), then runs the Go program,
# which starts every server and client itself: 127.0.0.1 only, free ports,
# each process bounded in time and killed by PID. Needs go, iperf (2.x),
# iperf3. See bench/README.md.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${WB_BENCH_OUT:-$(mktemp -d /tmp/wirebench-sidebyside.XXXXXX)}
mkdir -p "$OUT"
for tool in go iperf iperf3; do
	command -v "$tool" >/dev/null || { echo "sidebyside: $tool not found" >&2; exit 2; }
done
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$OUT/wirebench" ./cmd/wirebench && go build -o "$OUT/sidebyside" ./bench/sidebyside)
echo "sidebyside: binaries in $OUT" >&2
exec "$OUT/sidebyside" -wirebench "$OUT/wirebench" -iperf "$(command -v iperf)" -iperf3 "$(command -v iperf3)" "$@"
