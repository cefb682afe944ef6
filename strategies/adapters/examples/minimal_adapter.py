#!/usr/bin/python3
"""A complete lockbench adapter around an in-memory lock (PROTOCOL.md).

Replace the `locks` dictionary with your library's calls. Standard library only.
"""
import json
import sys
import time
import uuid

locks = {}  # key -> {"token": str, "expires": float (monotonic seconds)}


def now():
    return time.monotonic()


def holder(key):
    lock = locks.get(key)
    if lock and lock["expires"] <= now():  # the lease ran out: the lock is free
        del locks[key]
        lock = None
    return lock


def acquire(req):
    deadline = now() + req["wait_ms"] / 1000.0
    while holder(req["key"]) is not None:
        if now() >= deadline:
            return {"type": "error", "code": "held", "text": "held by another client"}
        time.sleep(0.005)
    token = uuid.uuid4().hex
    locks[req["key"]] = {"token": token, "expires": now() + req["lease_ms"] / 1000.0}
    return {"type": "acquire_ok", "token": token, "reentry": False}


def release(req):
    lock = holder(req["key"])
    if lock is None or lock["token"] != req["token"]:
        return {"type": "error", "code": "not-held", "text": "this token does not hold the lock"}
    del locks[req["key"]]
    return {"type": "release_ok"}


def renew(req):
    lock = holder(req["key"])
    if lock is None or lock["token"] != req["token"]:
        return {"type": "error", "code": "not-held", "text": "this token does not hold the lock"}
    lock["expires"] = now() + req["lease_ms"] / 1000.0
    return {"type": "renew_ok"}


def init(req):
    return {"type": "init_ok", "library": "in-memory", "version": "1.0", "services": [],
            "capabilities": {"renew": True}}


def clock(req):
    return {"type": "time_ok", "unix_ms": int(time.time() * 1000)}


HANDLERS = {"init": init, "acquire": acquire, "release": release, "renew": renew, "time": clock}


def main():
    for line in sys.stdin:  # ends when lockbench closes standard input
        req = json.loads(line)
        handler = HANDLERS.get(req.get("type"))
        try:
            answer = handler(req) if handler else {
                "type": "error", "code": "unsupported", "text": "unknown request"}
        except Exception as e:  # in doubt: any code but held/not-held/unsupported
            answer = {"type": "error", "code": "unknown", "text": repr(e)}
        answer["in_reply_to"] = req["id"]
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()  # logs go to standard error: print(..., file=sys.stderr)


if __name__ == "__main__":
    main()
