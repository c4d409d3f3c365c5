"""POST /v1/receipts as a careful Python team would write it (issue 20's peer).

aiohttp server and client, one process per core sharing the port
(SO_REUSEPORT), SQLite in WAL with synchronous=FULL, and grouped commits: each
process has one writer thread that takes every request waiting and commits
them in one transaction. Production first, sandbox on 21007; each
(environment, transaction_id) is granted once, by a UNIQUE key.

Configured like Storekeeper: STOREKEEPER_HTTP_ADDR, STOREKEEPER_APPLE_PRODUCTION_URL,
STOREKEEPER_APPLE_SANDBOX_URL, STOREKEEPER_APPLE_SHARED_SECRET,
STOREKEEPER_BUNDLE_IDS, STOREKEEPER_DATA_DIR; PEER_PROCESSES (default: cores).
"""
import asyncio
import multiprocessing
import os
import signal
import sqlite3
import time

from aiohttp import ClientError, ClientSession, ClientTimeout, TCPConnector, web

ENV = os.environ
PRODUCTION = ENV.get("STOREKEEPER_APPLE_PRODUCTION_URL", "https://buy.itunes.apple.com/verifyReceipt")
SANDBOX = ENV.get("STOREKEEPER_APPLE_SANDBOX_URL", "https://sandbox.itunes.apple.com/verifyReceipt")
SECRET = ENV.get("STOREKEEPER_APPLE_SHARED_SECRET")
BUNDLES = set(filter(None, ENV.get("STOREKEEPER_BUNDLE_IDS", "").split(",")))
DATABASE = os.path.join(ENV.get("STOREKEEPER_DATA_DIR", "./data"), "peer.sqlite")
SCHEMA = """
CREATE TABLE IF NOT EXISTS grants (environment TEXT, transaction_id TEXT, user_id TEXT,
    product_id TEXT, original_transaction_id TEXT, PRIMARY KEY (environment, transaction_id));
CREATE TABLE IF NOT EXISTS subscriptions (original_transaction_id TEXT, environment TEXT, user_id TEXT,
    product_id TEXT, expires_date_ms INTEGER, auto_renew INTEGER, PRIMARY KEY (environment, original_transaction_id));
"""


def error(status, code, retryable=False, apple_status=None):
    body = {"code": code, "message": code.replace("_", " "), "retryable": retryable}
    if apple_status is not None:
        body["apple_status"] = apple_status
    return web.json_response({"error": body}, status=status)


class GroupCommitter:
    """One connection, one thread: every request waiting is committed together."""

    def __init__(self):
        self.queue = asyncio.Queue()
        self.db = sqlite3.connect(DATABASE, isolation_level=None, check_same_thread=False, timeout=30)
        self.db.executescript("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;" + SCHEMA)

    async def record(self, user_id, environment, transactions, renewals):
        done = asyncio.get_running_loop().create_future()
        await self.queue.put(((user_id, environment, transactions, renewals), done))
        return await done

    async def run(self):
        loop = asyncio.get_running_loop()
        while True:
            batch = [await self.queue.get()]
            while not self.queue.empty():
                batch.append(self.queue.get_nowait())
            try:
                results = await loop.run_in_executor(None, self.commit, [work for work, _ in batch])
                for (_, done), result in zip(batch, results):
                    done.set_result(result)
            except sqlite3.Error as failure:
                for _, done in batch:
                    done.set_exception(failure)

    def commit(self, batch):
        db, results = self.db, []
        db.execute("BEGIN IMMEDIATE")
        try:
            for user_id, environment, transactions, renewals in batch:
                granted, already = [], []
                for t in transactions:
                    inserted = db.execute(
                        "INSERT OR IGNORE INTO grants VALUES (?, ?, ?, ?, ?)",
                        (environment, t["transaction_id"], user_id, t["product_id"], t["original_transaction_id"]),
                    ).rowcount
                    (granted if inserted else already).append(t)
                    if "expires_date_ms" in t:
                        auto_renew = renewals.get(t["original_transaction_id"], True)
                        db.execute(
                            "INSERT INTO subscriptions VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET"
                            " user_id = excluded.user_id, auto_renew = excluded.auto_renew,"
                            " expires_date_ms = max(expires_date_ms, excluded.expires_date_ms)",
                            (t["original_transaction_id"], environment, user_id, t["product_id"],
                             t["expires_date_ms"], auto_renew),
                        )
                rows = db.execute(
                    "SELECT product_id, original_transaction_id, environment, expires_date_ms, auto_renew"
                    " FROM subscriptions WHERE user_id = ?", (user_id,)).fetchall()
                results.append((granted, already, rows))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return results


async def ask_apple(session, receipt):
    request = {"receipt-data": receipt, "password": SECRET} if SECRET else {"receipt-data": receipt}
    async with session.post(PRODUCTION, json=request) as response:
        answer = await response.json(content_type=None)
    if answer.get("status") == 21007:
        async with session.post(SANDBOX, json=request) as response:
            answer = await response.json(content_type=None)
    return answer


def transaction(row):
    fields = {key: row[key] for key in ("transaction_id", "original_transaction_id", "product_id")}
    fields["quantity"] = int(row.get("quantity", 1))
    for key in ("purchase_date_ms", "expires_date_ms", "cancellation_date_ms"):
        if key in row:
            fields[key] = int(row[key])
    return fields


async def receipts(request):
    try:
        body = await request.json()
        user_id, receipt = body["user_id"], body.get("receipt_data") or body["receipt-data"]
    except (ValueError, KeyError, TypeError, AttributeError):
        return error(400, "bad_request")
    try:
        answer = await ask_apple(request.app["apple"], receipt)
    except (ClientError, asyncio.TimeoutError, ValueError):
        return error(503, "apple_unavailable", retryable=True)
    status = answer.get("status")
    if status == 21004:
        return error(502, "shared_secret_mismatch", apple_status=status)
    if status in (21005, 21009) or (21100 <= (status or 0) <= 21199):
        return error(503, "apple_unavailable", retryable=True, apple_status=status)
    if status != 0:
        return error(422, "receipt_invalid", apple_status=status)
    bundle_id = answer["receipt"].get("bundle_id")
    if BUNDLES and bundle_id not in BUNDLES:
        return error(422, "bundle_mismatch")
    rows = {row["transaction_id"]: transaction(row)
            for row in answer["receipt"].get("in_app", []) + answer.get("latest_receipt_info", [])}
    revoked = [t for t in rows.values() if "cancellation_date_ms" in t]
    renewals = {r["original_transaction_id"]: r.get("auto_renew_status") == "1"
                for r in answer.get("pending_renewal_info", [])}
    environment = answer.get("environment", "Production")
    fresh = [t for t in rows.values() if "cancellation_date_ms" not in t]
    granted, already, subscriptions = await request.app["ledger"].record(user_id, environment, fresh, renewals)
    now = int(time.time() * 1000)
    return web.json_response({
        "user_id": user_id, "environment": environment, "bundle_id": bundle_id, "apple_status": 0,
        "granted": granted, "already_granted": [t["transaction_id"] for t in already],
        "revoked": [{"transaction_id": t["transaction_id"], "cancellation_date_ms": t["cancellation_date_ms"]}
                    for t in revoked],
        "entitlements": [{"product_id": p, "original_transaction_id": o, "environment": e, "expires_date_ms": x,
                          "active": x > now, "auto_renew": bool(a), "state": "active" if x > now else "expired",
                          "kind": "auto_renewable"} for p, o, e, x, a in subscriptions],
    })


async def readyz(_):
    return web.json_response({"status": "ok"})


async def start(app):
    # Apple is a few hosts: keep connections alive, and no cap on how many are in flight.
    app["apple"] = ClientSession(connector=TCPConnector(limit=0), timeout=ClientTimeout(total=30))
    app["ledger"] = GroupCommitter()
    app["writer"] = asyncio.create_task(app["ledger"].run())
    yield
    app["writer"].cancel()
    await app["apple"].close()


def serve(host, port):
    app = web.Application()
    app.router.add_post("/v1/receipts", receipts)
    app.router.add_get("/readyz", readyz)
    app.cleanup_ctx.append(start)
    # The listen queue Storekeeper's gateway asks for (HTTPServerService), capped
    # by the kernel at net.core.somaxconn; aiohttp's default is 128.
    web.run_app(app, host=host, port=port, reuse_port=True, backlog=65535, print=None, access_log=None)


if __name__ == "__main__":
    host, port = ENV.get("STOREKEEPER_HTTP_ADDR", "127.0.0.1:8080").rsplit(":", 1)
    os.makedirs(os.path.dirname(DATABASE), exist_ok=True)
    sqlite3.connect(DATABASE).executescript("PRAGMA journal_mode=WAL;" + SCHEMA).close()
    workers = [multiprocessing.Process(target=serve, args=(host, int(port)))
               for _ in range(int(ENV.get("PEER_PROCESSES", os.cpu_count())))]
    for worker in workers:
        worker.start()
    signal.signal(signal.SIGTERM, lambda *_: [worker.terminate() for worker in workers])
    for worker in workers:
        worker.join()
