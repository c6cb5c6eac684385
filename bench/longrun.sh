#!/usr/bin/env bash
# bench/longrun.sh: one long reverse (-R) UDP test between two wirebenches
# on 127.0.0.1, at a datagram rate whose ids pass 2^31 within the test, and
# whether its counts stay exact: the datagrams the server says it sent
# against the ids the client counted (received + lost), the test's length
# against the length asked (a false FIN would end it early), and the rate.
#
#   bench/longrun.sh                          # 40 min of 18-byte datagrams at 1.2 Mpps
#   WB_LONG_SECONDS=60 bench/longrun.sh       # a first look
#   WB_LONG_PPS, WB_LONG_LEN, WB_LONG_BIN     # rate, datagram length, another build
#
# At 1 Mpps the 32-bit id wraps after 35 min 47 s; at 1.2 Mpps after
# 29 min 50 s. Needs the whole machine: on a busy host the sender falls
# short of the rate, and the run then says how many ids it reached.
# Every process it starts is bounded in time (timeout) and killed by PID at
# the end; traffic goes only to 127.0.0.1, on a port no socket uses now.
# Needs go (unless WB_LONG_BIN is given), ss and jq.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECS=${WB_LONG_SECONDS:-2400}
PPS=${WB_LONG_PPS:-1200000}
LEN=${WB_LONG_LEN:-18}
OUT=$(mktemp -d /tmp/wirebench-longrun.XXXXXX)
BIN=${WB_LONG_BIN:-}
if [ -z "$BIN" ]; then
	BIN="$OUT/wirebench"
	(cd "$ROOT" && CGO_ENABLED=0 go build -o "$BIN" ./cmd/wirebench)
fi
. "$ROOT/bench/lib.sh" # free_port, pids, cleanup at exit
port=$(free_port)
timeout $((SECS + 120)) "$BIN" server -B 127.0.0.1 -p "$port" --iperf3-port 0 --no-save --json \
	>"$OUT/server.json" 2>"$OUT/server.err" &
pids+=($!)
sleep 1
echo "longrun: $SECS s of $LEN-byte datagrams at $PPS/s, -R, port $port (output in $OUT)"
start=$(date +%s)
timeout $((SECS + 60)) "$BIN" client 127.0.0.1 -p "$port" --dialect iperf2 -u -R -l "$LEN" -b "${PPS}pps" \
	-t "$SECS" --json --no-save >"$OUT/client.json" 2>"$OUT/client.err" || true
took=$(($(date +%s) - start))
# The server's document is written when its sender ends: wait for it.
for _ in $(seq 1 30); do
	[ -s "$OUT/server.json" ] && break
	sleep 1
done
if ! [ -s "$OUT/client.json" ] || ! [ -s "$OUT/server.json" ]; then
	echo "longrun: no document from the client or the server; their errors:" >&2
	cat "$OUT/client.err" "$OUT/server.err" >&2
	exit 1
fi
sent=$(jq -s '[.[] | select(.test.direction == "send") | .sender.packets] | add // 0' "$OUT/server.json")
read -r got lost total secs rpps < <(jq -r '.receiver | "\(.packets) \(.lost) \(.total) \(.seconds) \(.packets_per_second)"' "$OUT/client.json")
spps=$(jq -s '[.[] | select(.test.direction == "send") | .sender.packets_per_second] | add // 0' "$OUT/server.json")
printf 'server sent      %d datagrams (%.0f/s; 2^31 = 2147483648: %s)\n' "$sent" "$spps" "$([ "$sent" -gt 2147483648 ] && echo passed || echo "not reached")"
printf 'client counted   %d ids: %d received + %d lost, over %.3f s (%.0f received/s), wall %d s\n' "$total" "$got" "$lost" "$secs" "$rpps" "$took"
ok=yes
[ "$total" -eq "$sent" ] || { ok=no; echo "ids counted ($total) differ from datagrams sent ($sent)"; }
[ $((got + lost)) -eq "$total" ] || { ok=no; echo "received + lost ($((got + lost))) differs from ids counted ($total)"; }
awk -v s="$secs" -v want="$SECS" 'BEGIN { exit !(s >= want - 1) }' || { ok=no; echo "the test ended after $secs s of $SECS: an early end (a false FIN?)"; }
jq -r '.warnings[]?' "$OUT/client.json" | sed 's/^/client warning: /'
echo "counts exact: $ok"
[ "$ok" = yes ]
