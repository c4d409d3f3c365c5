#!/usr/bin/env python3
"""Instructions per verification, counted by callgrind (issue 20's "how to measure").

Wall-clock rates on this shared 2-core VM drift by 30 % within an hour, and it has
no hardware counters (`perf stat -e instructions` answers <not supported>).
Valgrind counts the instructions each process executes, which repeat for the same
binaries and work whatever else the machine does. This runs each contender's
processes under `valgrind --tool=callgrind`, the simulator outside it, sends the
benchmark's mix of receipts (90 % production consumables, 10 % sandbox
subscriptions that production answers with 21007, every twentieth a replay) at
each concurrency, and prints the instructions per verification of every process,
counted only while that phase's requests were sent (callgrind_control -z / -d).

    python3 bench/instructions/count.py [--bin-dir .build/release] [--requests 1000]
        [--concurrency 1,16] [--contenders storekeeper,swift_floor,asyncio_server]

scripts/bench.sh --instructions builds in release mode and runs it. The dumps stay
in --out (callgrind_annotate reads them). Needs valgrind, objcopy and gcc; the
asyncio peer needs .build/peers-venv (scripts/bench.sh --peers makes it).
"""
import argparse
import glob
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SECRET = "bench-shared-secret"
BUNDLE = "com.example.storekeeper"


def free_ports(count):
    probes = [socket.socket() for _ in range(count)]
    try:
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [probe.getsockname()[1] for probe in probes]
    finally:
        for probe in probes:
            probe.close()


class Runner:
    """Starts processes (some under callgrind) and stops every one of them."""

    def __init__(self, out, shim):
        self.out, self.shim, self.processes = out, shim, []

    def start(self, name, argv, env, counted):
        environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "STOREKEEPER_LOG_LEVEL": "warning", **env}
        if counted:
            environment["LD_PRELOAD"] = self.shim
            argv = ["valgrind", "--tool=callgrind", "--quiet", f"--callgrind-out-file={self.out}/{name}.%p"] + argv
        log = open(os.path.join(self.out, f"{name}.log"), "w")
        process = subprocess.Popen(argv, env=environment, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.processes.append((name, process, counted))
        return process

    def stop(self):
        for _, process, _ in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, 15)
        for _, process, _ in reversed(self.processes):
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, 9)
                process.wait()
        self.processes = []


def wait_ready(port, path, want_ok, seconds=300):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            connection.request("GET", path)
            status = connection.getresponse().status
            connection.close()
            if status == 200 or not want_ok:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"127.0.0.1:{port}{path} not ready after {seconds} s")


def mint(sim_port, count, prefix):
    connection = http.client.HTTPConnection("127.0.0.1", sim_port)
    receipts = []
    for index in range(count):
        subscription = index % 10 == 9
        connection.request("POST", "/admin/purchases", json.dumps({
            "account": f"{prefix}-{index}",
            "product_id": "com.example.pro.monthly" if subscription else "com.example.gems",
            "type": "auto_renewable" if subscription else "consumable",
            "environment": "sandbox" if subscription else "production",
        }), {"Content-Type": "application/json"})
        receipts.append(json.loads(connection.getresponse().read())["receipt_data"])
    return receipts


def bodies(receipts, first_user):
    """As Workload.receiptBodies: every twentieth request replays the receipt sent 100 before."""
    out = []
    for index, receipt in enumerate(receipts):
        replay = index % 20 == 19 and index > 100
        out.append(json.dumps({"user_id": f"u-{first_user + index}", "receipt_data": receipts[index - 100] if replay else receipt}))
    return out


def send(port, payloads, concurrency):
    """Each of `concurrency` threads sends its share, one at a time on one keep-alive connection."""
    statuses, lock = {}, threading.Lock()

    def worker(share):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        for payload in share:
            connection.request("POST", "/v1/receipts", payload, {"Content-Type": "application/json"})
            response = connection.getresponse()
            response.read()
            with lock:
                statuses[response.status] = statuses.get(response.status, 0) + 1
        connection.close()

    threads = [threading.Thread(target=worker, args=(payloads[i::concurrency],)) for i in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses


def callgrind(command):
    subprocess.run(["callgrind_control", command], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def counted(out, work):
    """What `work` returned, the instructions of every counted process while it ran (by process name), and its seconds."""
    before = set(glob.glob(os.path.join(out, "*.*.*")))
    callgrind("-z")
    start = time.monotonic()
    result = work()
    seconds = time.monotonic() - start
    callgrind("-d")
    return result, dumped_totals(out, before), seconds


def dumped_totals(out, before):
    """Instructions in each dump written since `before` (a set of paths), by process name."""
    totals = {}
    for path in sorted(set(glob.glob(os.path.join(out, "*.*.*"))) - before):
        if path.endswith(".log"):
            continue
        name = os.path.basename(path).split(".")[0]
        with open(path) as dump:
            for line in dump:
                match = re.match(r"(summary|totals): (\d+)", line)
                if match:
                    totals[name] = totals.get(name, 0) + int(match.group(2))
                    break
    return totals


def contender_processes(contender, bin_dir, stripped, sim_port, verifiers):
    """(name, argv, environment) of a contender's counted processes, first to last."""
    http_port, *internal = free_ports(6)
    apple = {
        "STOREKEEPER_APPLE_PRODUCTION_URL": f"http://127.0.0.1:{sim_port}/production/verifyReceipt",
        "STOREKEEPER_APPLE_SANDBOX_URL": f"http://127.0.0.1:{sim_port}/sandbox/verifyReceipt",
        "STOREKEEPER_APPLE_SHARED_SECRET": SECRET, "STOREKEEPER_BUNDLE_IDS": BUNDLE,
    }
    data = tempfile.mkdtemp(prefix=f"instructions-{contender}-")
    if contender == "storekeeper":
        names = ["VERIFIER", "LEDGER", "EVENTS", "REPLAY", "REFRESH"]
        common = {f"STOREKEEPER_{n}_ENDPOINT": f"tcp://127.0.0.1:{p}" for n, p in zip(names, internal)}
        common.update(apple)
        members = [("ledger", [stripped("storekeeper-ledger")], {**common, "STOREKEEPER_DATA_DIR": data})]
        members += [(f"verifier{i + 1}", [stripped("storekeeper-verifier")], common) for i in range(verifiers)]
        members.append(("gateway", [stripped("storekeeper-gateway")],
                        {**common, "STOREKEEPER_HTTP_ADDR": f"127.0.0.1:{http_port}", "STOREKEEPER_RATE_LIMIT_PER_MINUTE": "0"}))
        return members, http_port, "/readyz", data
    server = {**apple, "STOREKEEPER_HTTP_ADDR": f"127.0.0.1:{http_port}", "STOREKEEPER_DATA_DIR": data}
    if contender == "swift_floor":
        return [("floor", [stripped("storekeeper-bench-floor")], server)], http_port, "/", data
    if contender == "asyncio_server":
        python = os.path.join(ROOT, ".build/peers-venv/bin/python")
        if not os.path.exists(python):
            raise SystemExit("the asyncio peer needs .build/peers-venv: run scripts/bench.sh --peers once")
        # Its main forks one worker per core, and callgrind_control reaches no forked child:
        # serve in this process instead, after the same set-up as its main.
        serve_here = (
            "import os, sqlite3, sys; sys.path.insert(0, sys.argv[1]); import server; "
            "os.makedirs(os.path.dirname(server.DATABASE), exist_ok=True); "
            "sqlite3.connect(server.DATABASE).executescript('PRAGMA journal_mode=WAL;' + server.SCHEMA).close(); "
            "host, port = server.ENV['STOREKEEPER_HTTP_ADDR'].rsplit(':', 1); server.serve(host, int(port))")
        argv = [python, "-c", serve_here, os.path.join(ROOT, "bench/peers/asyncio_server")]
        return [("asyncio", argv, server)], http_port, "/readyz", data
    raise SystemExit(f"unknown contender {contender}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin-dir", default=os.path.join(ROOT, ".build/release"))
    parser.add_argument("--requests", type=int, default=1000, help="verifications counted per phase")
    parser.add_argument("--warmup", type=int, default=300, help="verifications before counting starts")
    parser.add_argument("--concurrency", default="1,16", help="requests in flight, one phase each")
    parser.add_argument("--contenders", default="storekeeper,swift_floor")
    parser.add_argument("--verifiers", type=int, default=2)
    parser.add_argument("--idle-seconds", type=float, default=10, help="counted with no request first, per second")
    parser.add_argument("--out", default=os.path.join(ROOT, ".build/instructions"))
    arguments = parser.parse_args()
    levels = [int(level) for level in arguments.concurrency.split(",")]
    for tool in ("valgrind", "callgrind_control", "objcopy", "gcc"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is missing (apt-get install valgrind binutils gcc)")
    shutil.rmtree(arguments.out, ignore_errors=True)
    os.makedirs(arguments.out)
    shim = os.path.join(arguments.out, "sigsuspend_shim.so")
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", os.path.join(HERE, "sigsuspend_shim.c"), "-o", shim], check=True)

    def stripped(executable):
        # Valgrind 3.19 cannot read Swift 6.3's DWARF 5; the symbol table is enough to name functions.
        target = os.path.join(arguments.out, executable)
        if not os.path.exists(target):
            subprocess.run(["objcopy", "--strip-debug", os.path.join(arguments.bin_dir, executable), target], check=True)
        return target

    print(f"instructions per verification (callgrind), {arguments.requests} verifications per phase "
          f"after {arguments.warmup} of warm-up; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    for contender in arguments.contenders.split(","):
        runner, data = Runner(arguments.out, shim), None
        try:
            sim_port = free_ports(1)[0]
            runner.start("sim", [os.path.join(arguments.bin_dir, "storekeeper-sim")],
                         {"STOREKEEPER_SIM_ADDR": f"127.0.0.1:{sim_port}", "STOREKEEPER_APPLE_SHARED_SECRET": SECRET,
                          "STOREKEEPER_BUNDLE_IDS": BUNDLE}, counted=False)
            wait_ready(sim_port, "/", want_ok=False)
            members, port, ready_path, data = contender_processes(contender, arguments.bin_dir, stripped, sim_port, arguments.verifiers)
            for name, argv, env in members:
                runner.start(name, argv, env, counted=True)
            wait_ready(port, ready_path, want_ok=contender == "storekeeper")
            total = arguments.warmup + arguments.requests * len(levels)
            payloads = bodies(mint(sim_port, total, contender), 0)
            send(port, payloads[:arguments.warmup], levels[0])
            offset = arguments.warmup
            idle = {}
            if arguments.idle_seconds > 0:
                # What no request causes (timers, heartbeats, polls), per second: taken off each
                # phase below as "net", since valgrind stretches a phase's seconds 20-50 times.
                _, totals, seconds = counted(arguments.out, lambda: time.sleep(arguments.idle_seconds))
                idle = {name: totals.get(name, 0) / seconds for name, _, _ in members}
                shown = ", ".join(f"{name} {rate / 1e3:,.0f}k" for name, rate in idle.items())
                print(f"{contender:>15} | idle          | {sum(idle.values()) / 1e3:>7,.0f}k instructions per second ({shown})", flush=True)
            for level in levels:
                statuses, totals, seconds = counted(arguments.out, lambda: send(port, payloads[offset:offset + arguments.requests], level))
                offset += arguments.requests
                per = {name: totals.get(name, 0) / arguments.requests for name, _, _ in members}
                net = {name: per[name] - idle.get(name, 0) * seconds / arguments.requests for name in per}
                shown = ", ".join(f"{name} {count / 1e3:,.0f}k" for name, count in net.items())
                print(f"{contender:>15} | {level:>3} in flight | {sum(per.values()) / 1e3:>7,.0f}k instructions per verification, "
                      f"net of idle {sum(net.values()) / 1e3:,.0f}k ({shown}) | {seconds:.1f} s under valgrind | "
                      f"answers {dict(sorted(statuses.items()))}", flush=True)
        finally:
            runner.stop()
            if data:
                shutil.rmtree(data, ignore_errors=True)
    print(f"dumps: {arguments.out} (callgrind_annotate FILE | swift demangle --simplified)")


if __name__ == "__main__":
    main()
