#!/usr/bin/env bash
# DPDK as the measured peer, all in one run, from a fresh clone:
#   1. DPDK's testpmd io-forwards between two net_null ports on one forwarding core: its software
#      receive + transmit path per packet, with no NIC at all (the null PMD hands out and frees mbufs).
#      A macswap run beside it writes every packet's header, as rxlab's echo writes a byte of each.
#   2. `rxlab bench --echo`: each design's driver side (receive, echo app, transmit) per packet on one
#      thread, the device side timed apart and left out, as testpmd's forwarding core leaves out a NIC.
#   3. `rxlab run`: the whole live engine's echo rate, one NIC thread and one worker.
# Passes interleave the three (a machine that slows down slows all of them); each number is the median
# over the passes. Prints ns per packet and each design's ratio to testpmd's.
#
# Usage: bench/peers.sh [PASSES (3)] [TESTPMD_SECONDS (10)]. Needs root or sudo for apt-get the first time.
# Where it may, it runs the timed commands under SCHED_FIFO (`chrt -f 50`), so that other processes on a
# shared machine do not take the polling threads' CPUs mid-run (the kernel still leaves them 5 %).
set -euo pipefail
cd "$(dirname "$0")/.."
passes=${1:-3}
testpmd_s=${2:-10}

if ! command -v dpdk-testpmd >/dev/null; then
    # Debian 12 ships testpmd in dpdk-dev, beside the `dpdk` runtime package.
    sudo=$([ "$(id -u)" = 0 ] || echo sudo)
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends dpdk dpdk-dev
fi
command -v python3 >/dev/null || { echo "peers.sh: python3 is needed to read the results" >&2; exit 2; }
cargo build --release -q -p lab
rxlab=target/release/rxlab
rt=$(chrt -f 50 true 2>/dev/null && echo "chrt -f 50" || true)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for pass in $(seq 1 "$passes"); do
    echo "pass $pass of $passes" >&2
    # SIGINT after the timed run: testpmd stops forwarding and exits; its periodic stats are the record.
    # 16 Ki mbufs fit the 512 MB of ordinary pages that --no-huge allows.
    for mode in io macswap; do
        $rt timeout -s INT "$testpmd_s" dpdk-testpmd --no-huge -m 512 --file-prefix "rxlab-peers-$$" --no-pci \
            --vdev net_null0 --vdev net_null1 -l 0-1 -- \
            --forward-mode=$mode --stats-period 1 --total-num-mbufs=16384 >"$out/$mode.$pass" 2>&1 || true
    done
    $rt "$rxlab" bench --echo --rounds 1 --json >"$out/bench.$pass"
    $rt "$rxlab" run --iface privring --app echo --cores 1 --nic-threads 1 --duration 2s --json >"$out/live.$pass"
done

python3 - "$out" "$passes" <<'EOF'
import json, re, statistics, sys
out, passes = sys.argv[1], int(sys.argv[2])

def testpmd_mpps(path):
    # Each period prints Tx-pps per port; the forwarding rate is their sum. The first period includes
    # the start.
    log = open(path).read()
    pps = [int(x) for x in re.findall(r"Tx-pps:\s+(\d+)", log)]
    periods = [a + b for a, b in zip(pps[0::2], pps[1::2])][1:]
    if not periods:
        tail = "\n".join(log.splitlines()[-15:])
        sys.exit(f"peers.sh: testpmd printed no forwarding rate; the end of its output:\n{tail}")
    return statistics.median(periods) / 1e6

def live_mpps(path):
    v = json.load(open(path))
    return v["throughput"]["mpps"]

def median_mpps(name):
    return statistics.median(testpmd_mpps(f"{out}/{name}.{p}") for p in range(1, passes + 1))

dpdk, macswap = median_mpps("io"), median_mpps("macswap")
dpdk_ns = 1e3 / dpdk
designs = {}
for p in range(1, passes + 1):
    for row in json.load(open(f"{out}/bench.{p}"))["paths"]:
        t = row.get("one_thread_ns_per_packet")
        if t:
            designs.setdefault(row["path"], []).append(t["driver"])
live = statistics.median(live_mpps(f"{out}/live.{p}") for p in range(1, passes + 1))

print(f"receive + transmit per 64 B packet on one core, median of {passes} interleaved passes")
print(f"  {'path':<16} {'ns/packet':>9} {'x DPDK':>7}")
print(f"  {'dpdk testpmd io':<16} {dpdk_ns:>9.2f} {1.0:>7.2f}")
print(f"  {'dpdk macswap':<16} {1e3 / macswap:>9.2f} {dpdk / macswap:>7.2f}")
for name, ns in designs.items():
    m = statistics.median(ns)
    print(f"  {name:<16} {m:>9.2f} {m / dpdk_ns:>7.2f}")
print("whole forwarding path, Mpps (one core forwarding / one NIC thread + one worker)")
print(f"  dpdk testpmd io, 2 net_null ports   {dpdk:>7.2f}")
print(f"  dpdk testpmd macswap                {macswap:>7.2f}")
print(f"  rxlab live privring echo            {live:>7.2f}")
EOF
