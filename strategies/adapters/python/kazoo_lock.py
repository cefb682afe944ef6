#!/usr/bin/python3
"""lockbench adapter for kazoo's ZooKeeper locks, speaking strategies/adapters/PROTOCOL.md.

    strategies/adapters/python/kazoo_lock.py

Exclusive mode is kazoo's WriteLock (its Lock, but one that also waits for readers), shared mode
its ReadLock. The lease is the ZooKeeper session: its timeout is init's `options.lease_ms` (or,
without one, the first acquire's `lease_ms`), and kazoo keeps it alive by itself. The server
clamps the timeout to its limits, so init connects and answers the timeout it negotiated as
`lease_ms`: that is how long a crashed holder's lock lives. The fencing number is the lock node's sequence number. When
kazoo reports the connection SUSPENDED or the session LOST, every held lock gets a `lost` message:
kazoo's documentation says a SUSPENDED client must assume it no longer holds its locks.
"""
import json
import os
import sys
import threading

import libfaketime_sleep

libfaketime_sleep.install()  # before the library binds time.sleep

from adapter_protocol import error, serve

import kazoo
from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import LockTimeout
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.serialization import Connect

CAPABILITIES = {"reentrant": False, "shared": True, "fencing": True, "auto_renewal": True,
                "renew": False, "lost_signal": True, "concurrent": False}


def log(*parts):
    print("kazoo adapter:", *parts, file=sys.stderr, flush=True)


class InDoubt(Exception):
    pass


def bounded(seconds, work, on_late_success=None, on_late_failure=None):
    """Runs work() for at most `seconds`: kazoo retries a lost connection for as long as the session
    may live, longer than lockbench waits for an answer. If work() succeeds after we gave up on
    it, on_late_success(result) undoes what nobody will ever be told about; if it raises then,
    on_late_failure(error) says what is left of it."""
    outcome = {}
    finished = threading.Event()
    handover = threading.Lock()

    def run():
        try:
            outcome["result"] = work()
        except Exception as e:
            outcome["error"] = e
        with handover:
            finished.set()
            abandoned = outcome.get("abandoned", False)
        if abandoned and "result" in outcome and on_late_success:
            on_late_success(outcome["result"])
        if abandoned and "error" in outcome and on_late_failure:
            on_late_failure(outcome["error"])

    threading.Thread(target=run, daemon=True).start()
    finished.wait(seconds)
    with handover:
        if not finished.is_set():
            outcome["abandoned"] = True
            raise InDoubt(f"no answer from ZooKeeper within {seconds:.1f} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


class Adapter:
    def __init__(self):
        self.out = threading.Lock()  # kazoo's connection thread writes `lost` messages too
        self.zk = None
        self.session_lease_ms = None
        self.negotiated_ms = None  # the session timeout the server applies, once connected
        self.starting = threading.Lock()  # a start abandoned by a timeout may still be running
        self.grants = {}  # token -> {"client", "key", "lock", "held"}

    def send(self, message):
        with self.out:
            print(json.dumps(message), flush=True)

    def init(self, request):
        self.namespace = request.get("namespace", "")
        options = request.get("options", {})
        self.connect_s = options.get("connect_timeout_ms", 1000) / 1000
        self.command_s = options.get("command_timeout_ms", 1000) / 1000
        self.hosts = ",".join(f"{s['host']}:{s['port']}"
                              for s in request.get("servers", {}).get("zookeeper", []))
        answer = {"type": "init_ok", "library": "kazoo", "version": kazoo.version.__version__,
                  "services": ["zookeeper"], "capabilities": CAPABILITIES}
        # The probe carries no servers and is answered without connecting; without a lease the
        # session starts on the first acquire, whose lease is its timeout.
        lease_ms = options.get("lease_ms")
        if self.hosts and isinstance(lease_ms, int) and lease_ms > 0:
            bounded(self.connect_s + self.command_s, lambda: self.session(lease_ms))
            if self.negotiated_ms:
                answer["lease_ms"] = self.negotiated_ms
        return answer

    def session(self, lease_ms):
        with self.starting:
            return self.started_session(lease_ms)

    def started_session(self, lease_ms):
        if self.zk is None:
            zk = KazooClient(hosts=self.hosts, timeout=lease_ms / 1000)
            self.record_negotiated_timeout(zk)
            zk.add_listener(self.on_state)
            zk.start(timeout=self.connect_s)  # raises a timeout and stops itself when it fails
            self.zk, self.session_lease_ms = zk, lease_ms
        elif lease_ms != self.session_lease_ms:
            log(f"lease {lease_ms} ms ignored: the session's timeout stays {self.session_lease_ms} ms")
        return self.zk

    def record_negotiated_timeout(self, zk):
        """kazoo 2.8 keeps the session timeout it asked for; the server's answer to the connect
        request carries the one it applies, so the connection's request call is watched for it."""
        connection = zk._connection
        invoke = getattr(connection, "_invoke", None)
        if invoke is None:
            log("kazoo internals changed: the negotiated session timeout is unknown")
            return

        def recording_invoke(timeout, request, *args, **kwargs):
            result = invoke(timeout, request, *args, **kwargs)
            if isinstance(request, Connect):
                self.negotiated_ms = result[0].time_out
                log(f"session timeout asked {request.time_out} ms, negotiated {self.negotiated_ms} ms")
            return result

        connection._invoke = recording_invoke

    def on_state(self, state):
        if state not in (KazooState.SUSPENDED, KazooState.LOST):
            return
        for token, grant in list(self.grants.items()):
            if grant["held"]:
                grant["held"] = False
                self.send({"type": "lost", "client": grant["client"], "key": grant["key"],
                           "token": token, "text": f"kazoo connection state {state}"})

    def acquire(self, request):
        wait_s = request.get("wait_ms", 0) / 1000
        path = f"/{self.namespace}/{request['key']}"
        locks = {}

        def attempt():
            zk = self.session(request["lease_ms"])
            kind = zk.ReadLock if request.get("mode") == "shared" else zk.WriteLock
            lock = locks["lock"] = kind(path, request.get("client", ""))
            try:
                # kazoo's retry deadline is `timeout`, also without blocking: bound it there too.
                if lock.acquire(blocking=wait_s > 0, timeout=wait_s or self.command_s):
                    return True
            except LockTimeout:
                pass
            # kazoo removes its contender node after a refusal only on a best-effort basis, and a
            # node left behind would take the lock later, unseen: refused is definite once it is gone.
            for child in zk.get_children(path):
                if child.startswith(lock.prefix):
                    zk.delete(f"{path}/{child}")
            return False

        def abandoned(why):
            # Answered in doubt, and kazoo gave the acquire up: its contender node may have
            # reached the front of the queue - and held the lock for nobody - before it went.
            # Once no node of this attempt is left, whatever it held is gone (PROTOCOL.md,
            # `late_grant` phase `abandoned`); a node still there (or no answer) says nothing.
            lock = locks.get("lock")
            try:
                left = [c for c in self.zk.get_children(path) if lock and c.startswith(lock.prefix)]
            except Exception as e:
                log(f"acquire of {path} given up ({why}); whether its node is gone is unknown: {e!r}")
                return
            if left:
                log(f"acquire of {path} given up ({why}), its node {left} still there: not reported")
                return
            self.send({"type": "late_grant", "client": request.get("client"),
                       "key": request["key"], "id": request["id"], "phase": "abandoned"})

        def release_unreported(got):
            if not got:
                abandoned("refused after its answer")
                return
            log(f"acquire of {path} succeeded after its answer: releasing it")
            # lockbench hears of both ends (PROTOCOL.md, `late_grant`): without them its history
            # has only the in-doubt acquire to explain another client's `held`.
            lock = locks["lock"]
            late = {"type": "late_grant", "client": request.get("client"), "key": request["key"],
                    "id": request["id"], "token": f"{lock.node}@{path}"}
            self.send(dict(late, phase="granted"))
            try:
                released = lock.release()
            except Exception as e:
                log(f"releasing the late grant of {path}: {e!r}")
                self.send(dict(late, phase="released", ok=False, text=repr(e)))
                return
            self.send(dict(late, phase="released", ok=bool(released),
                           **({} if released else {"text": "kazoo: the lock is not acquired"})))

        if not bounded(wait_s + self.command_s, attempt, release_unreported,
                       lambda e: abandoned(f"failed after its answer: {e!r}")):
            return error("held", f"lock {request['key']} is held by another client")
        lock = locks["lock"]
        token = f"{lock.node}@{path}"
        self.grants[token] = {"client": request.get("client"), "key": request["key"],
                              "lock": lock, "held": True, "session": self.zk.client_id}
        return {"type": "acquire_ok", "token": token, "fence": int(lock.node[-10:]), "reentry": False}

    def release(self, request):
        grant = self.grants.get(request["token"])
        if grant is None:
            return error("not-held", "this adapter never granted that token")
        session_before = self.zk.client_id  # None while disconnected
        # False: kazoo knows the lock as not acquired (released before), nothing was sent.
        if not bounded(self.command_s, grant["lock"].release):
            return error("not-held", "kazoo: the lock is not acquired")
        grant["held"] = False
        # kazoo's Lock keeps is_acquired through a session expiry, and its release then deletes
        # in the new session a node the old one's expiry already removed (NoNodeError is
        # ignored): True, although the lock lapsed and may be another's by now. An ephemeral node
        # lives only as long as its session: if the session changed, the lock was not held.
        session = self.zk.client_id
        if session is None:
            return error("session-unknown", "kazoo: disconnected after the release: session unknown")
        if session != grant["session"]:
            # Already in a new session when the release began: nothing of it ran in the old one.
            # Otherwise kazoo's retry may have followed a delete that did run in the old session
            # (its reply lost with the connection, the session expired before kazoo reconnected,
            # the retry found the node gone): that release happened, so it is in doubt.
            if session_before is not None and session_before != grant["session"]:
                return error("not-held",
                             "kazoo: the session that held the lock expired before the release")
            return error("session-expired-during-release",
                         "kazoo: the session that held the lock expired while it was released: "
                         "whether the delete ran in it first is unknown")
        return {"type": "release_ok"}


def classify(e):
    if isinstance(e, (InDoubt, KazooTimeoutError)):
        return error("timeout", str(e))
    return None  # connection loss, expired session, anything else: in doubt


def main():
    adapter = Adapter()
    handlers = {"init": adapter.init, "acquire": adapter.acquire, "release": adapter.release}
    serve(handlers, adapter.send, log, classify,
          unsupported=lambda kind: f"kazoo adapter: no {kind!r} request (no renew call)")
    # stdin closed: exit without closing the session, which would release what we hold
    # (PROTOCOL.md, The process).
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
