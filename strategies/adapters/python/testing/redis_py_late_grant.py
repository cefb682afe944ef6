#!/usr/bin/python3
"""redis-py's late grant (PROTOCOL.md, `late_grant`): an acquire sent to a stopped redis-server
times out and is answered in doubt, and the server runs its SET when it resumes. The adapter must
then report that grant (`granted`, with the acquire's id and the token the server holds) and its
own release of it (`released`, ok), after which the lock is free.

Starts its own redis-server on a free loopback port. Exit 0: passed.

usage: redis_py_late_grant.py ADAPTER
"""
import os
import signal
import socket
import subprocess
import sys
import time

from adapter_under_test import AdapterUnderTest

DEADLINE_S = 30


def fail(why):
    sys.exit(f"redis_py_late_grant: {why}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def command(port, *args):
    """One RESP command on a fresh connection; returns the reply's first line."""
    with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
        s.sendall(f"*{len(args)}\r\n".encode() +
                  b"".join(f"${len(a)}\r\n{a}\r\n".encode() for a in args))
        reply = s.makefile("rb").readline().decode().rstrip("\r\n")
        if reply.startswith("$") and reply != "$-1":
            return s.makefile("rb").readline().decode().rstrip("\r\n")
        return reply


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    port = free_port()
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                               "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
    adapter = None
    try:
        while True:
            try:
                if command(port, "PING") == "+PONG":
                    break
            except OSError:
                time.sleep(0.02)
        adapter = AdapterUnderTest(sys.argv[1], DEADLINE_S, fail)
        init = adapter.call({"type": "init", "clients": ["c0"], "namespace": "late",
                             "servers": {"redis": [{"host": "127.0.0.1", "port": port,
                                                    "role": "master"}]},
                             "options": {"connect_timeout_ms": 1000, "command_timeout_ms": 300,
                                         "retry_delay_ms": 5}})
        if init["type"] != "init_ok":
            fail(f"init answered {init}")
        acquire = {"type": "acquire", "key": "k", "mode": "exclusive", "lease_ms": 10000,
                   "wait_ms": 0}
        warm_up = adapter.call(acquire)  # connected: the stopped server's SET waits in its socket
        if warm_up["type"] != "acquire_ok":
            fail(f"acquire of a free lock answered {warm_up}")
        released = adapter.call({"type": "release", "key": "k", "token": warm_up["token"]})
        if released["type"] != "release_ok":
            fail(f"release answered {released}")

        os.kill(server.pid, signal.SIGSTOP)
        try:
            in_doubt = adapter.call(acquire)
        finally:
            os.kill(server.pid, signal.SIGCONT)
        if in_doubt["type"] != "error" or in_doubt["code"] in ("held", "not-held", "unsupported"):
            fail(f"acquire with the server stopped answered {in_doubt}, expected an error in doubt")

        acquire_id = in_doubt["in_reply_to"]
        granted = adapter.next_message()
        if (granted.get("type"), granted.get("phase"), granted.get("id"), granted.get("key"),
                granted.get("client")) != ("late_grant", "granted", acquire_id, "k", "c0"):
            fail(f"expected the late grant of request {acquire_id}, got {granted}")
        done = adapter.next_message()
        if (done.get("type"), done.get("phase"), done.get("id"), done.get("ok"),
                done.get("token")) != ("late_grant", "released", acquire_id, True,
                                       granted.get("token")):
            fail(f"expected the adapter's release of that grant, ok, got {done}")
        holder = command(port, "GET", "late:k")
        if holder != "$-1":
            fail(f"the lock is still held after the late grant's release: {holder!r}")
        print(f"acquire in doubt ({in_doubt['code']}), late grant {granted['token']} reported and "
              "released")
    finally:
        if adapter:
            adapter.kill()
        server.kill()


if __name__ == "__main__":
    main()
