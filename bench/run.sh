#!/usr/bin/env bash
# bench/run.sh: wirebench next to iperf 2 on loopback, from one run.
#
#   1. Pacing accuracy at 0.1, 10 and 100 Mbit/s (1470-byte datagrams): our
#      client -> our server, and iperf -c -u -> iperf -s -u, each through
#      bench/udpgap, a loopback relay that stamps every datagram with the
#      kernel's receive time and reports the achieved rate and the spread of
#      the gaps between datagrams.
#   2. Received datagrams per second, 64 and 1470 bytes: `wirebench server`
#      vs `iperf -s -u`, both fed by the same sender (our client asking for
#      2,000,000 datagrams/s, i.e. as fast as it can), figures from the
#      server's own report.
#   3. Median RTT of 65500-byte ICMP echoes: `wirebench ping` vs iputils
#      `ping`, in interleaved rounds (needs root or ping_group_range for ours;
#      skipped with a reason otherwise).
#
# Everything runs on 127.0.0.1 only, every process is bounded in time and
# killed on exit. Needs: go, iperf (2.x), jq, ss. See bench/README.md.
#
# Environment: WB_BENCH_TIME (seconds per pacing run, default 5),
# WB_BENCH_PPS_TIME (seconds per receive run, default 3), WB_BENCH_OUT
# (directory for binaries and raw outputs, default a new /tmp directory).
set -euo pipefail

DUR=${WB_BENCH_TIME:-5}
PPS_DUR=${WB_BENCH_PPS_TIME:-3}
RATES=(100000 10000000 100000000) # bit/s, written out: iperf 2 reads "M" as 2^20
SIZES=(64 1470)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${WB_BENCH_OUT:-$(mktemp -d /tmp/wirebench-bench.XXXXXX)}
mkdir -p "$OUT"

for tool in go iperf jq ss; do
	command -v "$tool" >/dev/null || { echo "bench: $tool not found" >&2; exit 2; }
done

PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do stop_pid "$p"; done
}
trap cleanup EXIT INT TERM

# stop_pid PID: TERM to PID and its children (a `timeout` wrapper's
# command), then KILL to whatever is left after a second (iperf's server
# may ignore TERM while a test is open).
stop_pid() {
	local p=$1 i kids
	kill -0 "$p" 2>/dev/null || { wait "$p" 2>/dev/null || true; return 0; }
	kids=$(ps -o pid= --ppid "$p" || true)
	kill $kids "$p" 2>/dev/null || true
	for i in 1 2 3 4 5 6 7 8 9 10; do
		kill -0 "$p" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 $kids "$p" 2>/dev/null || true
	wait "$p" 2>/dev/null || true
}

# free_port: a random port in 20000-39999 with no TCP or UDP socket on it.
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 20000))
		if [ -z "$(ss -Htuan "sport = :$p")" ]; then
			echo "$p"
			return
		fi
	done
}

# wait_udp PORT: until something listens on 127.0.0.1:PORT/udp (max 5 s).
wait_udp() {
	local i
	for i in $(seq 50); do
		[ -n "$(ss -Huan "sport = :$1")" ] && return 0
		sleep 0.1
	done
	echo "bench: nothing listens on udp port $1" >&2
	return 1
}

echo "building wirebench and bench/udpgap into $OUT ..."
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$OUT/wirebench" ./cmd/wirebench &&
	CGO_ENABLED=0 go build -o "$OUT/udpgap" ./bench/udpgap)
WB=$OUT/wirebench
GAP=$OUT/udpgap
echo "$(iperf -v 2>&1 | head -1); $("$WB" version 2>/dev/null | head -1 || echo wirebench)"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
echo

# start_server TOOL PORT LOG: our server or iperf's, in the background,
# bounded by timeout even if this script is killed outright.
start_server() {
	local tool=$1 port=$2 log=$3 limit=$((DUR + PPS_DUR + 60))
	if [ "$tool" = ours ]; then
		timeout -k 2 "$limit" "$WB" server -B 127.0.0.1 -p "$port" --json -1 >"$log" 2>"$log.err" &
	else
		timeout -k 2 "$limit" stdbuf -oL iperf -s -u -B 127.0.0.1 -p "$port" >"$log" 2>&1 &
	fi
	SERVER_PID=$!
	PIDS+=("$SERVER_PID")
	wait_udp "$port"
}

# pacing TOOL RATE: one paced run through the relay; writes
# "achieved_bps gap_mean_us gap_sd_us gap_p99_us datagrams" to $OUT/row.
# (Run in this shell, not a subshell, so that the EXIT trap knows its PIDs.)
pacing() {
	local tool=$1 rate=$2 ps pr f=$OUT/pacing-$1-$2
	ps=$(free_port)
	pr=$(free_port)
	start_server "$tool" "$ps" "$f.server"
	"$GAP" -listen "127.0.0.1:$pr" -to "127.0.0.1:$ps" -idle 2s -max $((DUR + 30))s >"$f.gap" 2>"$f.gap.err" &
	local gp=$!
	PIDS+=("$gp")
	wait_udp "$pr"
	if [ "$tool" = ours ]; then
		timeout -k 2 $((DUR + 15)) "$WB" client 127.0.0.1 -p "$pr" -u -b "$rate" -l 1470 -t "$DUR" --json >"$f.client" 2>&1 || true
	else
		timeout -k 2 $((DUR + 15)) iperf -c 127.0.0.1 -p "$pr" -u -b "$rate" -l 1470 -t "$DUR" >"$f.client" 2>&1 || true
	fi
	wait "$gp" 2>/dev/null || true
	stop_pid "$SERVER_PID"
	jq -r '[.rate_bps, .gap_mean_us, .gap_sd_us, .gap_p99_us, .datagrams] | @tsv' "$f.gap" >"$OUT/row"
}

# receive TOOL SIZE: our client flat out into TOOL's server; writes
# "rx_pps tx_pps loss_pct status" to $OUT/row.
receive() {
	local tool=$1 size=$2 ps f=$OUT/recv-$1-$2
	ps=$(free_port)
	start_server "$tool" "$ps" "$f.server"
	timeout -k 2 $((PPS_DUR + 15)) "$WB" client 127.0.0.1 -p "$ps" -u -b 2000000pps -l "$size" -t "$PPS_DUR" --json >"$f.client" 2>"$f.client.err" || true
	sleep 0.3
	local status=ok rc
	if ! kill -0 "$SERVER_PID" 2>/dev/null; then
		wait "$SERVER_PID" 2>/dev/null && rc=0 || rc=$?
		[ "$tool" = iperf ] && [ "$rc" -ne 0 ] && status="server-died(rc=$rc)"
	fi
	stop_pid "$SERVER_PID"
	if ! jq -e '.receiver.source == "peer-report"' "$f.client" >/dev/null 2>&1; then
		echo "- $(jq -r '.sender.packets_per_second // "-"' "$f.client" 2>/dev/null || echo -) - no-server-report;$status" >"$OUT/row"
		return
	fi
	jq -r --arg st "$status" '[.receiver.packets_per_second, .sender.packets_per_second,
		(100 * (.sender.packets - .receiver.packets) / .sender.packets), $st] | @tsv' "$f.client" >"$OUT/row"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0 || a == "-" || b == "-") print "-"; else printf "%.2f", a / b }'; }

echo "== Pacing accuracy: 1470-byte datagrams, ${DUR} s per run, measured at the relay (kernel timestamps)"
printf '%-10s %-6s %12s %9s %11s %10s %11s %9s\n' "asked" "tool" "achieved" "err %" "gap mean" "gap sd" "gap p99" "dgrams"
printf '%-10s %-6s %12s %9s %11s %10s %11s %9s\n' "Mbit/s" "" "Mbit/s" "" "us" "us" "us" ""
declare -A SD
for rate in "${RATES[@]}"; do
	for tool in ours iperf; do
		pacing "$tool" "$rate"
		read -r bps mean sd p99 n <"$OUT/row"
		SD[$tool,$rate]=$sd
		awk -v r="$rate" -v t="$tool" -v b="$bps" -v m="$mean" -v s="$sd" -v p="$p99" -v n="$n" 'BEGIN {
			printf "%-10g %-6s %12.4f %+9.3f %11.1f %10.1f %11.1f %9d\n", r/1e6, t, b/1e6, 100*(b/r-1), m, s, p, n }'
	done
	echo "           gap sd ours/iperf: $(ratio "${SD[ours,$rate]}" "${SD[iperf,$rate]}")"
done
echo

echo "== Received datagrams/s into the server, ${PPS_DUR} s per run, sender: wirebench client -b 2000000pps"
printf '%-6s %-6s %12s %12s %8s  %s\n' "bytes" "server" "rx pps" "tx pps" "loss %" "status"
declare -A RX
for size in "${SIZES[@]}"; do
	for tool in ours iperf; do
		receive "$tool" "$size"
		read -r rx tx loss st <"$OUT/row"
		RX[$tool,$size]=$rx
		printf '%-6s %-6s %12s %12s %8s  %s\n' "$size" "$tool" \
			"$(awk -v x="$rx" 'BEGIN{ if (x == "-") print "-"; else printf "%.0f", x }')" \
			"$(awk -v x="$tx" 'BEGIN{ if (x == "-") print "-"; else printf "%.0f", x }')" \
			"$(awk -v x="$loss" 'BEGIN{ if (x == "-") print "-"; else printf "%.2f", x }')" "$st"
	done
	if [ "${RX[iperf,$size]}" = "-" ] && [ "$size" = 64 ]; then
		# iperf 2.1.8's server has been seen to crash on 64-byte datagrams:
		# compare at 65 bytes instead, and say so.
		echo "       iperf's server gave no report at 64 bytes; comparing at 65 bytes:"
		for tool in ours iperf; do
			receive "$tool" 65
			read -r rx tx loss st <"$OUT/row"
			RX[$tool,65]=$rx
			printf '%-6s %-6s %12.0f %12.0f %8.2f  %s\n' 65 "$tool" "$rx" "$tx" "$loss" "$st"
		done
		size=65
	fi
	echo "       rx pps ours/iperf: $(ratio "${RX[ours,$size]}" "${RX[iperf,$size]}")"
done
echo

# rtts FILE: the time= figures (ms) of ping-style reply lines, one per line.
rtts() { grep -o 'time=[0-9.]*' "$1" | cut -d= -f2; }
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "-"; else print a[int((NR + 1) / 2)] }'; }

PING_ROUNDS=${WB_BENCH_PING_ROUNDS:-5}
echo "== 65500-byte ICMP echo on 127.0.0.1: median RTT, $PING_ROUNDS interleaved rounds of 20 per tool"
if ! command -v ping >/dev/null; then
	echo "skipped: iputils ping is not installed"
elif ! timeout 10 "$WB" ping 127.0.0.1 -c 1 -q >"$OUT/ping-check" 2>&1; then
	echo "skipped: wirebench ping cannot open an ICMP socket here: $(tail -1 "$OUT/ping-check")"
else
	: >"$OUT/ping-ours"
	: >"$OUT/ping-iputils"
	for r in $(seq "$PING_ROUNDS"); do
		timeout 30 "$WB" ping 127.0.0.1 -s 65500 -c 20 -i 0.02 >>"$OUT/ping-ours" 2>&1 || true
		timeout 30 ping -n -s 65500 -c 20 -i 0.02 127.0.0.1 >>"$OUT/ping-iputils" 2>&1 || true
	done
	mo=$(rtts "$OUT/ping-ours" | median)
	mi=$(rtts "$OUT/ping-iputils" | median)
	printf '%-9s %8s %12s\n' "tool" "replies" "median ms"
	printf '%-9s %8s %12s\n' wirebench "$(rtts "$OUT/ping-ours" | wc -l)" "$mo" iputils "$(rtts "$OUT/ping-iputils" | wc -l)" "$mi"
	echo "          median ours/iputils: $(ratio "$mo" "$mi")"
	echo "          ours: $(grep -m1 '^socket:' "$OUT/ping-ours" | cut -d';' -f1)"
fi
echo
echo "raw outputs: $OUT"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
