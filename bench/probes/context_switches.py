#!/usr/bin/env python3
"""Context switches of a stack's processes over a run, per executable.

    python3 bench/probes/context_switches.py --bin-dir DIR -- COMMAND [ARG...]

Runs COMMAND (a benchmark that starts the executables in DIR, for example
`storekeeper-bench-stack --peers bench/peers --bin-dir DIR --contenders storekeeper
--rounds 1 ...`) and, every 0.3 s until it ends, reads every thread's
voluntary and involuntary context switches from /proc for each process whose
executable lies in DIR. Prints the total per executable name: the last count
seen of each process, summed. A thread that ends between two samples loses its
last 0.3 s, so compare runs of the same length and load.

Context switches are the cost callgrind does not see: each one is a wake-up of a
thread on a verification's path, and on a 2-core VM a cold cache after it.
"""
import argparse
import collections
import os
import subprocess
import sys
import time


def switches(pid):
    total = 0
    for thread in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{thread}/status") as status:
            for line in status:
                if "ctxt_switches:" in line:  # voluntary_ and nonvoluntary_
                    total += int(line.split()[1])
    return total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("a command to run is required")
    bin_dir = os.path.realpath(args.bin_dir) + os.sep
    last = {}
    run = subprocess.Popen(command)
    while run.poll() is None:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                executable = os.readlink(f"/proc/{pid}/exe")
                if executable.startswith(bin_dir):
                    key = (os.path.basename(executable), pid)
                    last[key] = max(last.get(key, 0), switches(pid))
            except OSError:
                continue  # gone meanwhile, or not ours to read
        time.sleep(0.3)
    totals = collections.Counter()
    for (name, _), count in last.items():
        totals[name] += count
    for name, count in sorted(totals.items()):
        print(f"{name}: {count} context switches")
    return run.returncode


if __name__ == "__main__":
    sys.exit(main())
