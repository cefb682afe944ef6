#!/usr/bin/python3
"""A ZooKeeper lock library's abandoned acquire (PROTOCOL.md, `late_grant` phase `abandoned`): an
acquire waiting behind another client's lock is answered `timeout`, in doubt, while ZooKeeper is
stopped; when ZooKeeper resumes, the library (Curator) or the adapter (kazoo's, after kazoo's
refusal) deletes its lock node and gives up. Whether that node reached the front of the queue
before it went nobody can tell, so the adapter must say, once the node is gone, that whatever the
acquire held is gone too: `abandoned`, with the acquire's id - and never `granted`. Afterwards the
lock works as before.

ZooKeeper is started as scripts/adapter-contract starts it; kazoo watches the lock's queue (the
adapters name their lock /NAMESPACE/KEY).

usage: zookeeper_abandoned_acquire.py "ADAPTER COMMAND" CONTRACT_RUNNER; exit 0: passed.
"""
import shlex
import sys
import time

from adapter_under_test import AdapterUnderTest, contract_servers

DEADLINE_S = 90
NAMESPACE = "abandoned"
WAIT_MS = 1500


def fail(why):
    sys.exit(f"zookeeper_abandoned_acquire: {why}")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    try:
        from kazoo.client import KazooClient
    except ImportError:
        print("kazoo is not installed (python3-kazoo): skipped")
        sys.exit(77)
    with contract_servers(sys.argv[2], "zk-abandoned-") as servers:
        adapter = None
        watcher = None
        zookeeper = None
        try:
            servers.provide("zookeeper", None)
            zookeeper = servers.by_service["zookeeper"][0]
            watcher = KazooClient(hosts=f"127.0.0.1:{zookeeper.port}")
            watcher.start(timeout=30)
            adapter = AdapterUnderTest(None, DEADLINE_S, fail, command=shlex.split(sys.argv[1]))
            # A session far longer than the stop, so that only the stop is in play.
            init = adapter.call({"type": "init", "clients": ["c0", "c1"], "namespace": NAMESPACE,
                                 "servers": {"zookeeper": [{"host": "127.0.0.1",
                                                            "port": zookeeper.port}]},
                                 "options": {"connect_timeout_ms": 5000, "command_timeout_ms": 1000,
                                             "retry_delay_ms": 5, "lease_ms": 20000}})
            if init["type"] != "init_ok":
                fail(f"init answered {init}")
            acquire = {"type": "acquire", "key": "k", "mode": "exclusive", "lease_ms": 20000}
            grant = adapter.call(dict(acquire, wait_ms=0), client="c0")
            if grant["type"] != "acquire_ok":
                fail(f"acquire of a free lock answered {grant}")

            waiting = adapter.send(dict(acquire, wait_ms=WAIT_MS), client="c1")
            queue = f"/{NAMESPACE}/k"
            until = time.monotonic() + 30
            while len(watcher.get_children(queue)) < 2:
                if time.monotonic() > until:
                    fail(f"c1's acquire made no node in {queue} within 30 s")
                time.sleep(0.005)
            zookeeper.pause()
            try:
                answer = adapter.next_message()
            finally:
                zookeeper.resume()
            if answer.get("in_reply_to") != waiting:
                fail(f"expected the answer to c1's acquire, got {answer}")
            if answer["type"] != "error" or answer["code"] != "timeout":
                fail(f"c1's acquire, still waiting when ZooKeeper stopped, answered {answer}; "
                     "expected `timeout` (the case under test did not happen)")

            report = adapter.next_message()
            expected = {"type": "late_grant", "client": "c1", "key": "k", "id": waiting,
                        "phase": "abandoned"}
            if {name: report.get(name) for name in expected} != expected:
                fail(f"after its acquire was answered in doubt, expected {expected}, got {report}")
            left = watcher.get_children(queue)
            if len(left) != 1:
                fail(f"`abandoned` was sent while {queue} holds {left}: c1's node is not gone")

            released = adapter.call({"type": "release", "key": "k", "token": grant["token"]},
                                    client="c0")
            if released["type"] != "release_ok":
                fail(f"c0's release answered {released}")
            again = adapter.call(dict(acquire, wait_ms=WAIT_MS), client="c1")
            if again["type"] != "acquire_ok":
                fail(f"c1's next acquire of the free lock answered {again}")
            print(f"c1's acquire answered `timeout` while ZooKeeper was stopped; once its node was "
                  f"gone the adapter said `abandoned` (request {waiting}); c1 was granted the lock "
                  "after c0 released it")
        finally:
            if zookeeper:
                zookeeper.resume()
            if watcher:
                watcher.stop()
                watcher.close()
            if adapter:
                adapter.kill()


if __name__ == "__main__":
    main()
