#!/usr/bin/python3
"""A lockbench adapter around OpenStack tooz's Redis lock (tooz.drivers.redis.RedisLock).

Written from strategies/adapters/PROTOCOL.md alone, as a test of that document: no other adapter
was read. A tooz coordinator per client (member id = the client id) and lease;
`coordinator.get_lock(key)` per grant, `lock.acquire(blocking=...)`, `lock.release()`,
`lock.heartbeat()` for `renew`.

What tooz fixes, and this adapter therefore reports:
- The lease is the driver's `lock_timeout`, a whole number of seconds set once per coordinator
  (`int(...)`; 0 would mean no expiry at all). An acquire's lease_ms is rounded up to whole
  seconds, at least 1, and takes a coordinator made with that lock_timeout; init connects with
  options.lease_ms when it is given and answers the lease tooz applies. tooz's heartbeat
  re-arms the lock's own lease, so renew first sets the lease it asks for (rounded the same way)
  on the redis-py lock under tooz's: the one place the adapter reaches under tooz's API.
- tooz names the key "<namespace>_<key>_lock" with its bytes namespace formatted by %s, so the
  Redis key is "b'<namespace>:tooz'_<key>_lock": not under lockbench's "<namespace>:" prefix,
  but it expires with the lease.
- Socket timeouts are whole seconds too (`timeout`, at least 1).

`--heart` starts tooz's heartbeat thread (coordinator.start(start_heart=True)), which re-arms
every held lock's TTL every half lease: tooz's own auto-renewal. tooz only logs a failed beat,
so there is no lost signal to forward.

Requires Debian's python3-tooz (3.1.0) and python3-redis, hence /usr/bin/python3.
"""
import itertools
import json
import logging
import math
import os
import sys
import time
import urllib.parse

import redis.exceptions
import tooz
import tooz.coordination
from importlib.metadata import version

logging.basicConfig(stream=sys.stderr, level=logging.WARNING)  # logs go to standard error
HEART = "--heart" in sys.argv[1:]

URL = []  # the coordinator URL, from init
coordinators = {}  # (client id, lease in seconds) -> tooz coordinator
grants = {}  # token -> tooz lock object
tokens = itertools.count(1)


def whole_seconds(ms):
    return max(1, math.ceil(ms / 1000.0))


def coordinator(client, lease_s):
    """The client's coordinator whose lock_timeout is lease_s (tooz fixes it per coordinator)."""
    if (client, lease_s) not in coordinators:
        c = tooz.coordination.get_coordinator(URL[0], client.encode(), lock_timeout=lease_s)
        c.start(start_heart=HEART)
        coordinators[client, lease_s] = c
    return coordinators[client, lease_s]


def init(req):
    answer = {"type": "init_ok", "library": "tooz (redis driver)", "version": version("tooz"),
              "services": ["redis"],
              "capabilities": {"renew": True, "auto_renewal": HEART}}
    redis_servers = req["servers"].get("redis", [])
    masters = [s for s in redis_servers if s.get("role") == "master"]
    sentinels = [s for s in redis_servers if s.get("role") == "sentinel"]
    if not req["clients"] or not (masters or sentinels):
        return answer  # the probe: connect nowhere
    opts = req.get("options", {})
    query = "timeout=%d&namespace=%s" % (whole_seconds(opts.get("command_timeout_ms", 1000)),
                                         req["namespace"] + ":tooz")
    if masters and ("unix_socket" in masters[0] or "user" in masters[0]):
        # tooz's redis URL is host and port with an optional password: say so, once, at init.
        return {"type": "error", "code": "unsupported",
                "text": "this tooz adapter takes a Redis host and port (and password) only, "
                        "not a unix socket or an ACL user"}
    password = masters[0].get("password") if masters else None
    auth = ":%s@" % urllib.parse.quote(password, safe="") if password else ""
    if sentinels:
        # tooz's Sentinel URL: the first sentinel, the others as fallbacks; tooz's redis-py
        # client then finds the master through them.
        first = sentinels[0]
        URL.append("redis://%s:%d?sentinel=%s&%s%s" % (
            first["host"], first["port"], first["master_name"], query,
            "".join("&sentinel_fallback=%s:%d" % (s["host"], s["port"]) for s in sentinels[1:])))
    else:
        URL.append("redis://%s%s:%d?%s" % (auth, masters[0]["host"], masters[0]["port"], query))
    if "lease_ms" in opts:  # connect now, and answer the lease the driver applies
        for client in req["clients"]:
            lease_s = coordinator(client, whole_seconds(opts["lease_ms"])).lock_timeout
        if lease_s * 1000 != opts["lease_ms"]:
            answer["lease_ms"] = lease_s * 1000
    return answer


def acquire(req):
    if req.get("mode", "exclusive") != "exclusive":
        return {"type": "error", "code": "unsupported", "text": "tooz's redis lock is exclusive"}
    lock = coordinator(req["client"], whole_seconds(req["lease_ms"])).get_lock(req["key"].encode())
    wait_s = req["wait_ms"] / 1000.0
    # False: one SET NX; a number: retry every 100 ms (redis-py's default) for that long.
    if not lock.acquire(blocking=wait_s if wait_s > 0 else False):
        return {"type": "error", "code": "held", "text": "SET NX refused: the key exists"}
    token = "%s-%d" % (req["client"], next(tokens))
    grants[token] = lock
    return {"type": "acquire_ok", "token": token, "reentry": False}


def release(req):
    lock = grants.pop(req["token"], None)
    if lock is None:
        return {"type": "error", "code": "not-held", "text": "unknown token"}
    owned = lock.is_still_owner()
    if lock.release():  # a Lua compare-and-delete on redis-py's token: True means deleted
        return {"type": "release_ok"}
    if not owned:
        return {"type": "error", "code": "not-held", "text": "the lock expired or was taken"}
    # Owned a moment ago, yet release() said False: it expired in between, or tooz retried
    # after a connection error and the first attempt may have deleted it. In doubt.
    return {"type": "error", "code": "release-refused",
            "text": "release() returned False although the lock was owned just before"}


def renew(req):
    lock = grants.get(req["token"])
    if lock is None:
        return {"type": "error", "code": "not-held", "text": "unknown token"}
    # tooz's heartbeat re-arms the lease the lock was made with; the one place this adapter
    # reaches under tooz is to set the lease this renew asks for (redis-py's Lock.timeout,
    # in whole seconds like tooz's) before it.
    lock._lock.timeout = whole_seconds(req["lease_ms"])
    try:
        if lock.heartbeat():  # PEXPIRE to that lease if the token still matches
            return {"type": "renew_ok"}
    except tooz.ToozError as e:
        if isinstance(e.__cause__, redis.exceptions.LockNotOwnedError):
            return {"type": "error", "code": "not-held", "text": str(e)}
        raise
    return {"type": "error", "code": "not-held", "text": "the lock was released"}


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
        except tooz.coordination.ToozConnectionError as e:  # a socket timeout or lost server
            answer = {"type": "error", "code": "timeout", "text": repr(e)}
        except Exception as e:  # in doubt
            logging.exception("request %s", req.get("id"))
            answer = {"type": "error", "code": "unknown", "text": repr(e)}
        answer["in_reply_to"] = req["id"]
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    # Release nothing (coordinator.stop() would release every held lock) and do not wait for
    # tooz's executor or heart threads.
    os._exit(0)


if __name__ == "__main__":
    main()
