# One request at a time against `storekeeper up --sim` (gateway 127.0.0.1:8080, simulator :8090, no API keys):
# python3 one_at_a_time.py [N]. Prints the simulator's own verifyReceipt latency and the stack's, p50/p90/p99.
# Sequential requests, one at a time over one keep-alive connection: the stack's latency per
# verification vs the simulator's own verifyReceipt for the same kind of receipt.
import http.client, json, sys, time, statistics
def mint(n):
    c = http.client.HTTPConnection("127.0.0.1", 8090)
    out = []
    for i in range(n):
        c.request("POST", "/admin/purchases", json.dumps({"account": f"acct-{i}", "product_id": "com.example.gems", "type": "consumable", "environment": "production"}), {"Content-Type": "application/json"})
        out.append(json.loads(c.getresponse().read())["receipt_data"])
    return out
def timed(host, port, path, bodies, headers):
    c = http.client.HTTPConnection(host, port)
    t = []
    for b in bodies:
        s = time.perf_counter(); c.request("POST", path, b, headers); r = c.getresponse(); r.read(); t.append((time.perf_counter() - s) * 1000)
        assert r.status == 200, r.status
        time.sleep(0.02)  # spread out, as at ~50/s
    return t
n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
receipts = mint(n)
sim = timed("127.0.0.1", 8090, "/production/verifyReceipt", [json.dumps({"receipt-data": r}) for r in receipts[:100]], {"Content-Type": "application/json"})
stack = timed("127.0.0.1", 8080, "/v1/receipts", [json.dumps({"user_id": f"u-{i}", "receipt_data": r}) for i, r in enumerate(receipts)], {"Content-Type": "application/json"})
q = lambda t, p: sorted(t)[int(len(t) * p) - 1]
print(f"sim alone: p50 {statistics.median(sim):.2f} p90 {q(sim,.9):.2f} ms;  stack: p50 {statistics.median(stack):.2f} p90 {q(stack,.9):.2f} p99 {q(stack,.99):.2f} ms")
