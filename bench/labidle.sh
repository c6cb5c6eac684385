#!/bin/bash
# bench/labidle.sh [WIREBENCH] [SECONDS]: what an idle `wirebench lab up --medium eth100` costs.
# Starts lab "li" (net 198.18.38.0/24, so it does not meet the default lab), waits 5 s, samples
# utime+stime of the lab's own processes (filler, forwarder, relays: their PIDs from `lab status --json`)
# from /proc/PID/stat over SECONDS (default 60) of no traffic, prints the share of a core, and removes
# the lab again (`lab down --name li`, which ends only that lab's processes). Needs root.
set -u
WB=${1:-wirebench} SECS=${2:-60} NAME=li NET=198.18.38.0/24
$WB lab up --name $NAME --net $NET --medium eth100 >/dev/null || exit 1
trap '$WB lab down --name $NAME >/dev/null' EXIT
sleep 5
pids=$($WB lab status --name $NAME --json | python3 -c '
import json, sys
c = json.load(sys.stdin).get("config", {})
p = [c[k]["pid"] for k in ("filler", "wire") if c.get(k)]
p += [r["pid"] for r in (c.get("model") or {}).get("relays") or []]
print(" ".join(map(str, p)))')
tck=$(getconf CLK_TCK)
cpu() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' /proc/$1/stat; } # utime + stime, after the command name
declare -A t0
for p in $pids; do t0[$p]=$(cpu $p); done
s0=$(awk '{print $1}' /proc/uptime); sleep "$SECS"; s1=$(awk '{print $1}' /proc/uptime)
sum=0
for p in $pids; do d=$(( $(cpu $p) - ${t0[$p]} )); sum=$((sum + d)); echo "pid $p: $d ticks"; done
python3 -c "print('lab processes together: %.2f %% of a core over %.1f s (load %s)' % (100*$sum/$tck/($s1-$s0), $s1-$s0, '$(cut -d' ' -f1 /proc/loadavg)'))"
$WB lab status --name $NAME | sed -n '/filled wire/,$p'
