# bench/lib.sh: what the bench scripts share; sourced, not run.
#
# free_port prints a port in 20000-39999 that no TCP or UDP socket uses
# now. Every process a script starts in the background goes into pids
# (pids+=($!)); cleanup, run at exit, kills them by PID and waits.

free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 20000))
		ss -Hltun "( sport = :$p )" 2>/dev/null | grep -q . || { echo "$p"; return; }
	done
}
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
