#!/usr/bin/env bash
# DPDK as the measured peer (issue 18), all in one run, from a fresh clone:
#   1. DPDK's testpmd io-forwards between two net_null ports on one forwarding core: its software
#      receive + transmit path per packet, with no NIC at all (the null PMD hands out and frees mbufs).
#   2. `rxlab bench --echo`: each design's driver side (receive, echo app, transmit) per packet on one
#      thread, the device side timed apart and left out, as testpmd's forwarding core leaves out a NIC.
#   3. `rxlab run`: the whole live engine's echo rate, one NIC thread and one worker.
# Passes interleave the three (a machine that slows down slows all of them); each number is the median
# over the passes. Prints ns per packet and each design's ratio to testpmd's.
#
# Usage: bench/peers.sh [PASSES (3)] [TESTPMD_SECONDS (6)]. Needs root or sudo for apt-get the first time.
set -euo pipefail
cd "$(dirname "$0")/.."
passes=${1:-3}
testpmd_s=${2:-6}

if ! command -v dpdk-testpmd >/dev/null; then
    # Debian 12 ships testpmd in dpdk-dev, beside the `dpdk` runtime package.
    sudo=$([ "$(id -u)" = 0 ] || echo sudo)
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends dpdk dpdk-dev
fi
command -v python3 >/dev/null || { echo "peers.sh: python3 is needed to read the results" >&2; exit 2; }
cargo build --release -q -p lab
rxlab=target/release/rxlab
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for pass in $(seq 1 "$passes"); do
    echo "pass $pass of $passes" >&2
    # SIGINT after the timed run: testpmd stops forwarding and exits; its periodic stats are the record.
    # 16 Ki mbufs fit the 512 MB of ordinary pages that --no-huge allows.
    timeout -s INT "$testpmd_s" dpdk-testpmd --no-huge -m 512 --file-prefix "rxlab-peers-$$" --no-pci \
        --vdev net_null0 --vdev net_null1 -l 0-1 -- \
        --forward-mode=io --stats-period 1 --total-num-mbufs=16384 >"$out/testpmd.$pass" 2>&1 || true
    "$rxlab" bench --echo --rounds 1 --json >"$out/bench.$pass"
    "$rxlab" run --iface privring --app echo --cores 1 --nic-threads 1 --duration 2s --json >"$out/live.$pass"
done

python3 - "$out" "$passes" <<'EOF'
import json, re, statistics, sys
out, passes = sys.argv[1], int(sys.argv[2])

def testpmd_mpps(path):
    # Each period prints Tx-pps per port; the forwarding rate is their sum. The first two periods
    # include the start, the last may be cut by the signal.
    pps = [int(x) for x in re.findall(r"Tx-pps:\s+(\d+)", open(path).read())]
    periods = [a + b for a, b in zip(pps[0::2], pps[1::2])][2:-1]
    if not periods:
        sys.exit(f"peers.sh: {path}: testpmd printed no forwarding rate (run it by hand to see why)")
    return statistics.median(periods) / 1e6

def live_mpps(path):
    v = json.load(open(path))
    return v["throughput"]["mpps"]

dpdk = statistics.median(testpmd_mpps(f"{out}/testpmd.{p}") for p in range(1, passes + 1))
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
for name, ns in designs.items():
    m = statistics.median(ns)
    print(f"  {name:<16} {m:>9.2f} {m / dpdk_ns:>7.2f}")
print("whole forwarding path, Mpps (one core forwarding / one NIC thread + one worker)")
print(f"  dpdk testpmd io, 2 net_null ports   {dpdk:>7.2f}")
print(f"  rxlab live privring echo            {live:>7.2f}")
EOF
