#!/usr/bin/env bash
# bench/manyload.sh: the 1000-clients row of bench/sidebyside.sh, N runs in a
# row, each with other work on the machine beside it, as a shared lab host
# has: two busy loops, an iperf3 TCP test with 4 streams and a wirebench UDP
# test at 300,000 datagrams/s, all on 127.0.0.1. Prints each run's UDP
# reports, "did not receive ack" warnings and the server socket's drops, and
# the totals.
#
#   bench/manyload.sh            # 10 runs, about 8 minutes
#   bench/manyload.sh 3          # 3 runs
#   WB_MANY_LOAD=0 bench/manyload.sh   # the same runs without the other work
#
# Every process it starts is bounded in time and killed by PID at the end;
# ports are free ones on 127.0.0.1. Needs go, iperf (2.x), iperf3, jq, ss.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-10}
LOAD=${WB_MANY_LOAD:-1}
OUT=${WB_BENCH_OUT:-$(mktemp -d /tmp/wirebench-manyload.XXXXXX)}
for tool in go iperf iperf3 jq; do
	command -v "$tool" >/dev/null || { echo "manyload: $tool not found" >&2; exit 2; }
done
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$OUT/wirebench" ./cmd/wirebench && go build -o "$OUT/sidebyside" ./bench/sidebyside)
. "$ROOT/bench/lib.sh" # free_port, pids, cleanup at exit
if [ "$LOAD" != 0 ]; then
	# At most an hour each, whatever happens to this script.
	timeout 3600 bash -c 'while :; do :; done' & pids+=($!)
	timeout 3600 bash -c 'while :; do :; done' & pids+=($!)
	p3=$(free_port); pw=$(free_port)
	timeout 3600 iperf3 -s -p "$p3" >/dev/null 2>&1 & pids+=($!)
	timeout 3600 "$OUT/wirebench" server -B 127.0.0.1 -p "$pw" --iperf3-port 0 --no-save >/dev/null 2>&1 & pids+=($!)
	sleep 0.5
	timeout 3600 iperf3 -c 127.0.0.1 -p "$p3" -t 3500 -P 4 >/dev/null 2>&1 & pids+=($!)
	timeout 3600 "$OUT/wirebench" client 127.0.0.1 -p "$pw" -u -b 300000pps -l 64 -t 3500 --no-save >/dev/null 2>&1 & pids+=($!)
	echo "manyload: with two busy loops, iperf3 -P 4 and a wirebench UDP test at 300,000/s beside it" >&2
fi
printf '%-4s %-8s %-12s %-7s %-6s %-7s %-9s %s\n' run udp ack-warns drops tcp iperf3 seconds load
ru=0; rt=0; rd=0
for i in $(seq "$RUNS"); do
	load=$(cut -d' ' -f1 /proc/loadavg)
	"$OUT/sidebyside" -wirebench "$OUT/wirebench" -iperf "$(command -v iperf)" -iperf3 "$(command -v iperf3)" \
		--only many --json >"$OUT/many.$i.json" 2>"$OUT/many.$i.err" || true
	read -r u n d tc i3 s < <(jq -r '.many // . | "\(.udp_reports) \(.udp_no_ack) \(.udp_socket_drops) \(.tcp_done) \(.iperf3_done) \(.seconds|floor)"' "$OUT/many.$i.json")
	pu=$(jq -r '.many // . | .plan.udp_clients' "$OUT/many.$i.json")
	printf '%-4s %-8s %-12s %-7s %-6s %-7s %-9s %s\n' "$i" "$u/$pu" "$n" "$d" "$tc" "$i3" "$s" "$load"
	ru=$((ru + u)); rt=$((rt + pu)); rd=$((rd + d))
done
echo "manyload: $ru/$rt UDP server reports in $RUNS runs, $rd datagrams dropped by the server's socket; outputs in $OUT"
