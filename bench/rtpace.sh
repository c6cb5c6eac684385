#!/usr/bin/env bash
# rtpace.sh: RFC 2544 against the 10 Mbit/s, 5 ms-queue model with the
# sender at normal priority (WIREBENCH_REALTIME=0) and in the real-time
# class, interleaved, ROUNDS times (default 2), optionally beside BUSY busy
# loops (default 2; each bounded to the script's run). Prints, per run, the
# trials this host spoiled (host_stalled), each size's NDR against the
# model and the test's verdict. Run as root (real time needs it).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-2} busy=${BUSY:-2}
bin=$(mktemp -d)/rfc.test
go test -c -o "$bin" ./internal/rfc2544
pids=()
for _ in $(seq "$busy"); do timeout 3600 bash -c 'while :; do :; done' & pids+=($!); done
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$(dirname "$bin")"' EXIT
cd internal/rfc2544
for r in $(seq "$rounds"); do
	for rt in 0 1; do
		out=$(WIREBENCH_REALTIME=$rt RFC2544_ATTEMPTS=1 "$bin" -test.run 'TestReflectShallowQueue$' -test.count=1 -test.v 2>&1 || true)
		printf 'real-time=%s round %s: %3d trials host_stalled; %s; %s; load %s\n' "$rt" "$r" \
			"$(grep -c 'host_stalled' <<<"$out" || true)" \
			"$(grep -oE '[0-9]+ B: NDR [0-9.]+/s PDR [0-9.]+/s \(model [0-9.]+/s\), limited by this host [a-z]+' <<<"$out" | paste -sd';' -)" \
			"$(grep -oE '^--- [A-Z]+' <<<"$out" | paste -sd' ' -)" "$(cut -d' ' -f1 /proc/loadavg)"
	done
done
