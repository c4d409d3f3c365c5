"""POST /v1/receipts the way most tutorials write it (issue 20's peer):
Flask, InAppPy's AppStoreValidator, sqlite3 opened per request (Flask's own
pattern), served by gunicorn. Production first, sandbox on 21007 (InAppPy's
auto_retry_wrong_env_request); each (environment, transaction_id) is granted
once, by a UNIQUE key.

Configured like Storekeeper: STOREKEEPER_APPLE_PRODUCTION_URL,
STOREKEEPER_APPLE_SANDBOX_URL, STOREKEEPER_APPLE_SHARED_SECRET,
STOREKEEPER_BUNDLE_IDS, STOREKEEPER_DATA_DIR.
"""
import os
import sqlite3
import time

from flask import Flask, g, jsonify, request
from inapppy import AppStoreValidator, InAppPyValidationError

ENV = os.environ
SECRET = ENV.get("STOREKEEPER_APPLE_SHARED_SECRET")
BUNDLES = set(filter(None, ENV.get("STOREKEEPER_BUNDLE_IDS", "").split(",")))
DATABASE = os.path.join(ENV.get("STOREKEEPER_DATA_DIR", "./data"), "peer.sqlite")
SCHEMA = """
CREATE TABLE IF NOT EXISTS grants (environment TEXT, transaction_id TEXT, user_id TEXT,
    product_id TEXT, original_transaction_id TEXT, PRIMARY KEY (environment, transaction_id));
CREATE TABLE IF NOT EXISTS subscriptions (original_transaction_id TEXT, environment TEXT, user_id TEXT,
    product_id TEXT, expires_date_ms INTEGER, auto_renew INTEGER, PRIMARY KEY (environment, original_transaction_id));
"""

app = Flask(__name__)


class Validator(AppStoreValidator):
    """InAppPy hard-codes Apple's two URLs in `_change_url_by_sandbox`; this points them at the simulator."""

    def _change_url_by_sandbox(self):
        self.url = ENV["STOREKEEPER_APPLE_SANDBOX_URL"] if self.sandbox else ENV["STOREKEEPER_APPLE_PRODUCTION_URL"]


def db():
    if "db" not in g:
        g.db = sqlite3.connect(DATABASE, timeout=30)
    return g.db


@app.teardown_appcontext
def close_db(_):
    connection = g.pop("db", None)
    if connection is not None:
        connection.close()


def error(status, code, retryable=False, apple_status=None):
    body = {"code": code, "message": code.replace("_", " "), "retryable": retryable}
    if apple_status is not None:
        body["apple_status"] = apple_status
    return jsonify(error=body), status


def transaction(row):
    fields = {key: row[key] for key in ("transaction_id", "original_transaction_id", "product_id")}
    fields["quantity"] = int(row.get("quantity", 1))
    for key in ("purchase_date_ms", "expires_date_ms", "cancellation_date_ms"):
        if key in row:
            fields[key] = int(row[key])
    return fields


@app.post("/v1/receipts")
def receipts():
    body = request.get_json(silent=True) or {}
    user_id, receipt = body.get("user_id"), body.get("receipt_data") or body.get("receipt-data")
    if not user_id or not receipt:
        return error(400, "bad_request")
    # One validator per request: auto-retry flips the validator's `sandbox`.
    validator = Validator(auto_retry_wrong_env_request=True, http_timeout=30)
    try:
        answer = validator.validate(receipt, shared_secret=SECRET)
    except InAppPyValidationError as failure:
        status = (failure.raw_response or {}).get("status")
        if status is None or status in (21005, 21009) or 21100 <= status <= 21199:
            return error(503, "apple_unavailable", retryable=True, apple_status=status)
        if status == 21004:
            return error(502, "shared_secret_mismatch", apple_status=status)
        return error(422, "receipt_invalid", apple_status=status)
    bundle_id = answer["receipt"].get("bundle_id")
    if BUNDLES and bundle_id not in BUNDLES:
        return error(422, "bundle_mismatch")
    environment = answer.get("environment", "Production")
    rows = {row["transaction_id"]: transaction(row)
            for row in answer["receipt"].get("in_app", []) + answer.get("latest_receipt_info", [])}
    renewals = {r["original_transaction_id"]: r.get("auto_renew_status") == "1"
                for r in answer.get("pending_renewal_info", [])}
    granted, already, revoked = [], [], []
    connection = db()
    with connection:
        for t in rows.values():
            if "cancellation_date_ms" in t:
                revoked.append({"transaction_id": t["transaction_id"], "cancellation_date_ms": t["cancellation_date_ms"]})
                continue
            inserted = connection.execute(
                "INSERT OR IGNORE INTO grants VALUES (?, ?, ?, ?, ?)",
                (environment, t["transaction_id"], user_id, t["product_id"], t["original_transaction_id"]),
            ).rowcount
            (granted if inserted else already).append(t)
            if "expires_date_ms" in t:
                connection.execute(
                    "INSERT INTO subscriptions VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET"
                    " user_id = excluded.user_id, auto_renew = excluded.auto_renew,"
                    " expires_date_ms = max(expires_date_ms, excluded.expires_date_ms)",
                    (t["original_transaction_id"], environment, user_id, t["product_id"], t["expires_date_ms"],
                     renewals.get(t["original_transaction_id"], True)),
                )
        subscriptions = connection.execute(
            "SELECT product_id, original_transaction_id, environment, expires_date_ms, auto_renew"
            " FROM subscriptions WHERE user_id = ?", (user_id,)).fetchall()
    now = int(time.time() * 1000)
    return jsonify(
        user_id=user_id, environment=environment, bundle_id=bundle_id, apple_status=0, granted=granted,
        already_granted=[t["transaction_id"] for t in already], revoked=revoked,
        entitlements=[{"product_id": p, "original_transaction_id": o, "environment": e, "expires_date_ms": x,
                       "active": x > now, "auto_renew": bool(a), "state": "active" if x > now else "expired",
                       "kind": "auto_renewable"} for p, o, e, x, a in subscriptions],
    )


@app.get("/readyz")
def readyz():
    return jsonify(status="ok")


os.makedirs(os.path.dirname(DATABASE), exist_ok=True)
with sqlite3.connect(DATABASE) as setup:
    setup.executescript(SCHEMA)
