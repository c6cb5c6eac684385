#!/usr/bin/env bash
# bench/serverrss.sh: the server's memory under many long UDP tests. Starts a
# wirebench server on 127.0.0.1 and STREAMS iperf2-dialect UDP test streams of
# SECONDS each at RATE datagrams/s (CLIENTS client processes with -P
# STREAMS/CLIENTS each; every stream is a test of its own on the server), and
# samples the server's resident memory (VmRSS and VmHWM in /proc/PID/status)
# every STEP seconds while they run and for a few seconds after. Prints one
# line per sample, then the peak and the growth from the first sample taken
# with every stream running to the last one before the clients end.
#
#   bench/serverrss.sh                    # 500 streams × 60 s × 1000/s, about 75 s
#   WB_RSS_SECONDS=30 bench/serverrss.sh  # a shorter first look
#   WB_RSS_BIN=/tmp/wb-old bench/serverrss.sh   # measure another build
#
# Every process it starts is bounded in time (timeout) and killed by PID at
# the end; traffic goes only to 127.0.0.1, on a port no socket uses now.
# Needs go (unless WB_RSS_BIN is given) and ss.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
STREAMS=${WB_RSS_STREAMS:-500}
CLIENTS=${WB_RSS_CLIENTS:-10}
SECONDS_=${WB_RSS_SECONDS:-60}
RATE=${WB_RSS_RATE:-1000}
LEN=${WB_RSS_LEN:-64}
STEP=${WB_RSS_STEP:-5}
OUT=$(mktemp -d /tmp/wirebench-serverrss.XXXXXX)
BIN=${WB_RSS_BIN:-}
if [ -z "$BIN" ]; then
	BIN="$OUT/wirebench"
	(cd "$ROOT" && CGO_ENABLED=0 go build -o "$BIN" ./cmd/wirebench)
fi
if [ $((STREAMS % CLIENTS)) -ne 0 ]; then
	echo "serverrss: WB_RSS_STREAMS ($STREAMS) must be a multiple of WB_RSS_CLIENTS ($CLIENTS)" >&2
	exit 2
fi
PER=$((STREAMS / CLIENTS))
. "$ROOT/bench/lib.sh" # free_port, pids, cleanup at exit
port=$(free_port)
limit=$((SECONDS_ + 120))
timeout "$limit" "$BIN" server -B 127.0.0.1 -p "$port" --iperf3-port 0 --no-save \
	--max-tests 1024 --max-tests-per-source 0 --max-new-tests-per-second-per-source 0 \
	>"$OUT/server.out" 2>"$OUT/server.err" &
tpid=$!
pids+=("$tpid")
sleep 1
# The server is timeout's child: its memory is the one to read.
spid=$(cat "/proc/$tpid/task/$tpid/children" 2>/dev/null | awk '{print $1}')
[ -n "$spid" ] && kill -0 "$spid" || { echo "serverrss: the server did not start:" >&2; cat "$OUT/server.err" >&2; exit 1; }
rss() { awk '/^VmRSS/{r=$2} /^VmHWM/{h=$2} END{printf "%d %d\n", r/1024, h/1024}' "/proc/$spid/status"; }
read -r base _ < <(rss)
cpids=()
for i in $(seq "$CLIENTS"); do
	# -b is the client's total, shared by its -P streams. The clients are
	# load, not the measurement: their senders stay in the normal class
	# (WIREBENCH_REALTIME=0) at nice 10, or ten real-time senders take
	# both cores of a small host and the server reads in the 5 % the
	# kernel leaves the normal class.
	WIREBENCH_REALTIME=0 timeout "$limit" nice -n 10 "$BIN" client 127.0.0.1 -p "$port" -u -b "$((RATE * PER))pps" -l "$LEN" -t "$SECONDS_" -P "$PER" \
		--no-save --json >"$OUT/client.$i.json" 2>"$OUT/client.$i.err" &
	cpids+=($!)
	pids+=($!)
done
echo "serverrss: server pid $spid on 127.0.0.1:$port, $STREAMS UDP streams ($CLIENTS clients × -P $PER) of ${SECONDS_} s at ${RATE}/s, ${LEN}-byte datagrams; RSS before any test ${base} MiB"
printf '%-6s %-9s %-9s %s\n' t_s rss_MiB hwm_MiB running_clients
start=$(date +%s)
first=""
last=""
peak=0
while :; do
	sleep "$STEP"
	now=$(($(date +%s) - start))
	running=0
	for p in "${cpids[@]}"; do kill -0 "$p" 2>/dev/null && running=$((running + 1)); done
	read -r r h < <(rss)
	printf '%-6s %-9s %-9s %s\n' "$now" "$r" "$h" "$running"
	[ "$r" -gt "$peak" ] && peak=$r
	if [ "$running" -eq "$CLIENTS" ] && [ "$now" -ge $((STEP * 2)) ]; then
		[ -z "$first" ] && first=$r
		last=$r
	fi
	[ "$running" -eq 0 ] && break
	[ "$now" -gt "$limit" ] && break
done
sleep 3
read -r r h < <(rss)
printf '%-6s %-9s %-9s %s (after the clients ended)\n' "$(($(date +%s) - start))" "$r" "$h" 0
echo "serverrss: peak RSS ${peak} MiB, peak HWM ${h} MiB; while every stream ran: ${first:-?} MiB at the first sample, ${last:-?} MiB at the last"
if command -v jq >/dev/null; then
	# What the server counted, from its reports to the clients.
	jq -s '[.[].streams[]?.receiver] | {streams: length, packets: (map(.packets) | add), lost: (map(.lost) | add)}' "$OUT"/client.*.json | tr -d '\n ' ; echo
fi
echo "serverrss: client outputs in $OUT"
