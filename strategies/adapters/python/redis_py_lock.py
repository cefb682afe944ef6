#!/usr/bin/python3
"""lockbench adapter for redis-py's Lock (redis.lock.Lock), speaking strategies/adapters/PROTOCOL.md.

    strategies/adapters/python/redis_py_lock.py

One JSON request per line on stdin, one answer per line on stdout, logs on stderr. The lease is
the Lock's `timeout`, the wait budget its `blocking_timeout`, `renew` is `extend(replace_ttl=True)`.

An acquire whose SET timed out or lost its connection is answered in doubt, and the SET may still
have been applied (a stopped server runs it when it resumes, a lost reply hides it): redis-py then
holds a lock it does not know of. The adapter gives the SET its own token and looks for it on the
server; when it finds it, it tells lockbench (PROTOCOL.md, `late_grant`) and releases that grant.
"""
import json
import sys
import threading
import time
import uuid

import libfaketime_sleep

libfaketime_sleep.install()  # before the library binds time.sleep

from adapter_protocol import error, serve

import redis
from redis.sentinel import Sentinel
from redis.exceptions import ConnectionError, LockNotOwnedError, TimeoutError

CAPABILITIES = {"reentrant": False, "shared": False, "fencing": False, "auto_renewal": False,
                "renew": True, "lost_signal": False, "concurrent": False}


def log(*parts):
    print("redis-py adapter:", *parts, file=sys.stderr, flush=True)


class Adapter:
    def __init__(self):
        self.client = None
        self.namespace = ""
        self.retry_delay_s = 0.1
        self.command_s = 1.0
        self.grants = {}  # token -> redis.lock.Lock
        self.out = threading.Lock()  # the late-grant watchers write too

    def init(self, request):
        self.namespace = request.get("namespace", "")
        options = request.get("options", {})
        servers = request.get("servers", {}).get("redis", [])
        masters = [s for s in servers if s.get("role") == "master"]
        sentinels = [s for s in servers if s.get("role") == "sentinel"]
        timeouts = {"socket_connect_timeout": options.get("connect_timeout_ms", 1000) / 1000,
                    "socket_timeout": options.get("command_timeout_ms", 1000) / 1000}
        # The probe carries no servers: answer it without connecting anywhere.
        if sentinels:
            # Sentinel-managed, as redis-py's users run it on a Sentinel deployment: each new
            # connection asks the sentinels for the master, and a connection to a master that was
            # demoted (READONLY) is dropped, so the client follows a failover by itself.
            sentinel = Sentinel([(s["host"], s["port"]) for s in sentinels],
                                sentinel_kwargs=dict(timeouts), **timeouts)
            self.client = sentinel.master_for(sentinels[0]["master_name"], **timeouts)
        elif masters:
            master = masters[0]
            where = ({"unix_socket_path": master["unix_socket"]} if "unix_socket" in master
                     else {"host": master["host"], "port": master["port"]})
            self.client = redis.Redis(**where, username=master.get("user"),
                                      password=master.get("password"), **timeouts)
        if sentinels or masters:
            self.retry_delay_s = options.get("retry_delay_ms", 100) / 1000
            self.command_s = timeouts["socket_timeout"]
        return {"type": "init_ok", "library": "redis-py", "version": redis.__version__,
                "services": ["redis"], "capabilities": CAPABILITIES}

    def acquire(self, request):
        if request.get("mode", "exclusive") != "exclusive":
            return error("unsupported", "redis-py's Lock has no shared mode")
        wait_s = request.get("wait_ms", 0) / 1000
        lock = self.client.lock(f"{self.namespace}:{request['key']}",
                                timeout=request["lease_ms"] / 1000, sleep=self.retry_delay_s,
                                thread_local=False)
        token = uuid.uuid4().hex
        # False means every SET NX answered "exists": nothing was written, the refusal is definite.
        # A timeout or a broken connection raises instead, and the SET may have been applied.
        try:
            granted = lock.acquire(blocking=wait_s > 0, blocking_timeout=wait_s or None,
                                   token=token)
        except (ConnectionError, TimeoutError):
            threading.Thread(target=self.watch_for_late_grant, args=(request, lock, token),
                             daemon=True).start()
            raise
        if not granted:
            return error("held", f"lock {request['key']} is held by another client")
        self.grants[token] = lock
        return {"type": "acquire_ok", "token": token, "reentry": False}

    def watch_for_late_grant(self, request, lock, token):
        """Looks for the in-doubt acquire's token on the server until it shows (a late grant:
        reported and released) or the server has answered for a command timeout without it: a
        SET that reached the server before redis-py closed its connection runs before the server
        reads that close, and a stopped server, which runs it when it resumes, answers nothing
        meanwhile."""
        late = {"type": "late_grant", "client": request.get("client"), "key": request["key"],
                "id": request["id"], "token": token}
        answering_since = None
        give_up_at = time.monotonic() + 60 + request["lease_ms"] / 1000
        while time.monotonic() < give_up_at:
            try:
                holder = self.client.get(lock.name)
            except (ConnectionError, TimeoutError):
                answering_since = None
                time.sleep(self.retry_delay_s)
                continue
            if holder is not None and holder.decode(errors="replace") == token:
                break
            answering_since = answering_since or time.monotonic()
            if time.monotonic() - answering_since >= self.command_s:
                return
            time.sleep(self.retry_delay_s)
        else:
            return
        log(f"acquire of {request['key']} succeeded after its answer: releasing it")
        self.send(dict(late, phase="granted"))
        lock.local.token = token.encode()
        try:
            lock.release()
        except Exception as e:  # LockNotOwnedError: it expired first; or the release failed
            self.send(dict(late, phase="released", ok=False, text=f"{type(e).__name__}: {e}"))
            return
        self.send(dict(late, phase="released", ok=True))

    def send(self, answer):
        with self.out:
            print(json.dumps(answer), flush=True)

    def granted_lock(self, request):
        lock = self.grants.get(request["token"])
        if lock is not None:
            # redis-py forgets its token before the release script runs, so after a release that
            # timed out it would refuse locally; give it back and let the server decide.
            lock.local.token = request["token"].encode()
        return lock

    def release(self, request):
        lock = self.granted_lock(request)
        if lock is None:
            return error("not-held", "this adapter never granted that token")
        try:
            lock.release()
        except LockNotOwnedError as e:
            return error("not-held", str(e))
        return {"type": "release_ok"}

    def renew(self, request):
        lock = self.granted_lock(request)
        if lock is None:
            return error("not-held", "this adapter never granted that token")
        try:
            lock.extend(request["lease_ms"] / 1000, replace_ttl=True)
        except LockNotOwnedError as e:
            return error("not-held", str(e))
        return {"type": "renew_ok"}


def classify(e):
    if isinstance(e, TimeoutError):
        return error("timeout", f"redis: {e}")
    if isinstance(e, ConnectionError):
        # A connection that broke mid-command may have delivered it: in doubt, not refused.
        return error("connection", f"redis: {e}")
    return None


def main():
    adapter = Adapter()
    handlers = {"init": adapter.init, "acquire": adapter.acquire, "release": adapter.release,
                "renew": adapter.renew}
    serve(handlers, adapter.send, log, classify)
    # stdin closed: exit without releasing anything (PROTOCOL.md, The process).


if __name__ == "__main__":
    main()
