#!/usr/bin/env python3
"""bench/tcpab.py: interleaved A/B rounds of TCP tests on 127.0.0.1.

  bench/tcpab.py ROUNDS SECONDS STREAMS NAME=SKIND:SBIN,CKIND:CBIN[,KEY~VALUE...] ...

Each NAME is one configuration: a server (SKIND wb = a wirebench binary,
iperf = an iperf 2 binary) and a client of either kind, plus environment
variables for both (KEY~VALUE), for the server only (s.KEY~VALUE) or the
client only (c.KEY~VALUE). Rounds run A, B, ..., A, B, ...; each test
starts a fresh server on its own port (5701 upwards), runs the client for
SECONDS with -P STREAMS, and kills the server by its PID. Both run at nice
-15 (ABNICE to change). Per test and as medians: Gbit/s (a wirebench
client's receiver figure, its server's count; an iperf 2 client's own SUM
line), CPU seconds per GB of client and server (rusage and /proc), and
voluntary context switches per GB of each, sampled between 0.8 s and
SECONDS-0.3 s. The load average is printed before and after: compare
ratios from one run only. Example, old binary against new:

  bench/tcpab.py 5 4 2 old=wb:/tmp/wb.old,wb:/tmp/wb.old new=wb:/tmp/wb.new,wb:/tmp/wb.new
"""
import subprocess, sys, time, os, statistics, json, signal

def ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        s = f.read().rsplit(")", 1)[1].split()
    return (int(s[11]) + int(s[12])) / os.sysconf("SC_CLK_TCK")

port = [5700]
CSW = []
def csw(pid):
    n = 0
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{t}/status") as f:
                for l in f:
                    if l.startswith("voluntary_ctxt_switches"):
                        n += int(l.split()[1])
    except OSError:
        pass
    return n

def run(cfg, secs, streams):
    sk, sb = cfg[0]; ck, cb = cfg[1]
    port[0] += 1; p = str(port[0])
    if sk == "wb":
        sargs = [sb, "server", "-B", "127.0.0.1", "-p", p, "--no-save", "--iperf3-port", "0"]
    else:
        sargs = [sb, "-s", "-B", "127.0.0.1", "-p", p]
    NICE = ["nice", "-n", os.environ.get("ABNICE", "-15")]
    senv = {k[2:] if k.startswith("s.") else k: v for k, v in cfg[2].items() if not k.startswith("c.")}
    cenv = {k[2:] if k.startswith("c.") else k: v for k, v in cfg[2].items() if not k.startswith("s.")}
    srv = subprocess.Popen(NICE + sargs, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ, **senv))
    time.sleep(0.8)
    if ck == "wb":
        cargs = [cb, "client", "127.0.0.1", "-p", p, "-t", str(secs), "-P", str(streams), "--json", "--no-save", "--dialect", "iperf2"]
    else:
        cargs = [cb, "-c", "127.0.0.1", "-p", p, "-t", str(secs), "-P", str(streams), "-y", "C"]
    t0 = os.times()
    cp = subprocess.Popen(NICE + cargs, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ, **cenv))
    time.sleep(0.8)
    a = (csw(srv.pid), csw(cp.pid), time.time())
    time.sleep(secs - 1.1)
    b = (csw(srv.pid), csw(cp.pid), time.time())
    so, se = cp.communicate(timeout=secs + 30)
    class O: pass
    out = O(); out.stdout, out.stderr = so, se
    t1 = os.times()
    CSW.append(((b[0] - a[0]) / (b[2] - a[2]), (b[1] - a[1]) / (b[2] - a[2])))
    time.sleep(0.3)
    scpu = ticks(srv.pid)
    srv.send_signal(signal.SIGTERM); srv.wait(timeout=10)
    ccpu = (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system)
    if ck == "wb":
        d = json.loads(out.stdout)
        r = d.get("receiver") or d.get("sender") or {}
        byts, bps = r.get("bytes", 0), r.get("bits_per_second", 0)
    else:
        lines = [l.split(",") for l in out.stdout.strip().splitlines() if l]
        if not lines:
            print("iperf client: no output:", out.stderr.strip()[:200])
            return 0, 1, 0, 0
        if streams > 1:
            # iperf 2.1.8 with -y C prints one line per stream and, unlike
            # its text output, no SUM line (id -1): add the streams up.
            s = [x for x in lines if x[5] == "-1"]
            if s:
                byts, bps = int(s[-1][7]), float(s[-1][8])
            else:
                per = lines[-streams:]
                byts, bps = sum(int(x[7]) for x in per), sum(float(x[8]) for x in per)
        else:
            byts, bps = int(lines[-1][7]), float(lines[-1][8])
    return bps / 1e9, byts, ccpu, scpu

def main():
    rounds, secs, streams = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    cfgs = []
    for a in sys.argv[4:]:
        name, rest = a.split("=", 1)
        parts = rest.split(",")
        s, c = parts[0].split(":"), parts[1].split(":")
        env = dict(kv.split("~") for kv in parts[2:])
        cfgs.append((name, (s, c, env)))
    res = {n: [] for n, _ in cfgs}
    print("loadavg before:", open("/proc/loadavg").read().strip())
    for r in range(rounds):
        for n, c in cfgs:
            g, b, cc, sc = run(c, secs, streams)
            sw = CSW[-1]
            res[n].append((g, b, cc, sc, sw[1] / (g / 8), sw[0] / (g / 8)))
            print(f"round {r+1} {n:12s} {g:6.2f} Gbit/s  client {cc/(b/1e9):.3f} s/GB  server {sc/(b/1e9):.3f} s/GB  vol.csw/GB client {sw[1]/(g/8):.0f} server {sw[0]/(g/8):.0f}", flush=True)
    print("loadavg after:", open("/proc/loadavg").read().strip())
    base = None
    for n, _ in cfgs:
        v = res[n]
        g = statistics.median(x[0] for x in v)
        B = sum(x[1] for x in v) / 1e9
        cc = sum(x[2] for x in v) / B; sc = sum(x[3] for x in v) / B
        if base is None: base = g
        wc = statistics.median(x[4] for x in v); ws = statistics.median(x[5] for x in v)
        print(f"{n:12s} median {g:6.2f} Gbit/s (x{g/base:.2f})  CPU s/GB client {cc:.3f} server {sc:.3f} total {cc+sc:.3f}  vol.csw/GB client {wc:.0f} server {ws:.0f}")
main()
