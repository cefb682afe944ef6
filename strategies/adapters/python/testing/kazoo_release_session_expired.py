#!/usr/bin/python3
"""kazoo's release when the holder's session expires under it: the delete runs in the holder's
session, its reply is lost with the connection (a partition between the delete and its reply, as
`zk-client-partitioned` can fall), ZooKeeper expires the session, and kazoo's retry deletes again
in a new session and ignores the node being gone. The release happened, so the adapter must answer
it in doubt, never `not-held` (nor `release_ok`: the lock may have been another's by then).

A proxy in front of ZooKeeper forwards the holder's delete, swallows everything after it on that
connection (the delete's reply too, which it reads to prove that the delete succeeded), and
refuses new connections until ZooKeeper closes the held session's connection, which it does when
it expires that session. ZooKeeper is started as scripts/adapter-contract starts it.

usage: kazoo_release_session_expired.py ADAPTER CONTRACT_RUNNER; exit 0: passed.
"""
import socket
import struct
import sys
import threading

from adapter_under_test import AdapterUnderTest, contract_servers

DEADLINE_S = 60
ZOO_DELETE = 2


def fail(why):
    sys.exit(f"kazoo_release_session_expired: {why}")


def frames(buffer):
    """Splits whole length-prefixed frames off the front of `buffer`: (frames, rest)."""
    out = []
    while len(buffer) >= 4:
        length = struct.unpack(">i", buffer[:4])[0]
        if len(buffer) < 4 + length:
            break
        out.append(buffer[:4 + length])
        buffer = buffer[4 + length:]
    return out, buffer


class Proxy:
    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.armed = False
        self.holed = threading.Event()    # the delete went through; its connection is cut
        self.expired = threading.Event()  # ZooKeeper closed the cut connection: session expired
        self.delete_error = None          # the swallowed reply's error code (0: deleted)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            client, _ = self.listener.accept()
            if self.holed.is_set() and not self.expired.is_set():
                client.close()  # partitioned: kazoo cannot reconnect before the expiry
                continue
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            state = {"hole": False, "delete_xid": None}
            threading.Thread(target=self.to_server, args=(client, upstream, state),
                             daemon=True).start()
            threading.Thread(target=self.to_client, args=(upstream, client, state),
                             daemon=True).start()

    def to_server(self, client, upstream, state):
        pending, first = b"", True
        while True:
            data = client.recv(65536)
            if not data:
                if not state["hole"]:
                    upstream.close()
                return  # a cut connection stays open upstream until ZooKeeper expires it
            if state["hole"]:
                continue
            whole, pending = frames(pending + data)
            for frame in whole:
                if first:  # the connect request has no request header
                    first = False
                elif self.armed and struct.unpack(">ii", frame[4:12])[1] == ZOO_DELETE:
                    self.armed = False
                    state["delete_xid"] = struct.unpack(">i", frame[4:8])[0]
                    state["hole"] = True  # before the reply can come back
                    self.holed.set()
                    upstream.sendall(frame)
                    break
                upstream.sendall(frame)

    def to_client(self, upstream, client, state):
        pending = b""
        while True:
            try:
                data = upstream.recv(65536)
            except OSError:
                data = b""
            if not data:
                if state["hole"]:
                    self.expired.set()
                client.close()
                return
            if not state["hole"]:
                client.sendall(data)
                continue
            whole, pending = frames(pending + data)
            for frame in whole:
                xid, _zxid, err = struct.unpack(">iqi", frame[4:20])
                if xid == state["delete_xid"]:
                    self.delete_error = err


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with contract_servers(sys.argv[2], "kazoo-release-") as servers:
        adapter = None
        try:
            servers.provide("zookeeper", None)
            proxy = Proxy(servers.by_service["zookeeper"][0].port)
            adapter = AdapterUnderTest(sys.argv[1], DEADLINE_S, fail)
            # A short session, so that it expires soon under the partition; a long command
            # timeout, so that the adapter waits for kazoo's retries instead of answering
            # `timeout`.
            init = adapter.call({"type": "init", "clients": ["c0"], "namespace": "expired",
                                 "servers": {"zookeeper": [{"host": "127.0.0.1",
                                                            "port": proxy.port}]},
                                 "options": {"connect_timeout_ms": 5000,
                                             "command_timeout_ms": 30000, "retry_delay_ms": 5,
                                             "lease_ms": 600}})
            if init["type"] != "init_ok":
                fail(f"init answered {init}")
            grant = adapter.call({"type": "acquire", "key": "k", "mode": "exclusive",
                                  "lease_ms": 600, "wait_ms": 0})
            if grant["type"] != "acquire_ok":
                fail(f"acquire of a free lock answered {grant}")
            proxy.armed = True
            # kazoo's SUSPENDED and LOST reach us as `lost` meanwhile.
            answer = adapter.call({"type": "release", "key": "k", "token": grant["token"]},
                                  skipping=("lost",))
            if not proxy.expired.is_set():
                fail("the release was answered before ZooKeeper expired the holder's session: "
                     f"{answer}")
            if proxy.delete_error != 0:
                fail(f"the holder's delete did not succeed in its own session (error "
                     f"{proxy.delete_error}): the case under test did not happen")
            if answer["type"] != "error" or answer["code"] in ("not-held", "held", "unsupported"):
                fail(f"a release whose delete ran in the holder's session answered {answer}, "
                     "expected an error in doubt")
            print(f"release whose delete ran before the session expired answered {answer['code']}")
        finally:
            if adapter:
                adapter.kill()


if __name__ == "__main__":
    main()
