#!/usr/bin/python3
"""Shows, without lockbench, that an idle kazoo client loses a short ZooKeeper session by itself.

    /usr/bin/python3 strategies/adapters/python/testing/kazoo_idle_session_expiry.py [timeout_s]

It starts a standalone ZooKeeper (Debian's jar; tickTime 50 ms, minSessionTimeout 100 ms, as
lockbench's embedded server), connects one KazooClient with the given session timeout (0.3 s by
default, t1's lease), does nothing for 3 s and prints each heartbeat ping kazoo sends and each
state change, with the time since connecting. kazoo 2.8's connection loop waits
max(read_timeout/2 - jitter, jitter) between pings, jitter uniform in 0..0.40 s and
read_timeout = 2/3 of the negotiated timeout: the longest gap is max(timeout/3, 0.40 s), so at a
session timeout not well above 0.4 s (t1's 300 ms) a gap can exceed the session itself and the
server expires a healthy, idle session. The Java client (Curator) pings every timeout/3 without
jitter. Exit 1 when the session was lost.
"""
import logging
import os
import socket
import subprocess
import sys
import tempfile
import time

from kazoo.client import KazooClient
from kazoo.protocol import connection


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_zookeeper(directory, port):
    os.makedirs(f"{directory}/data")
    with open(f"{directory}/zoo.cfg", "w") as cfg:
        cfg.write(f"tickTime=50\nminSessionTimeout=100\nmaxSessionTimeout=600000\n"
                  f"dataDir={directory}/data\nclientPort={port}\nclientPortAddress=127.0.0.1\n"
                  "admin.enableServer=false\nforceSync=no\n"
                  "4lw.commands.whitelist=ruok\n")
    log = open(f"{directory}/zookeeper.log", "w")
    server = subprocess.Popen(
        ["java", "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
         "-Dorg.slf4j.simpleLogger.showDateTime=true",
         "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
         "-cp", "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar",
         "org.apache.zookeeper.server.ZooKeeperServerMain", f"{directory}/zoo.cfg"],
        stdout=log, stderr=log)
    for _ in range(300):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as s:
                s.sendall(b"ruok")
                if s.recv(4) == b"imok":
                    return server
        except OSError:
            pass
        time.sleep(0.1)
    server.kill()
    sys.exit("ZooKeeper did not start; see " + f"{directory}/zookeeper.log")


def main():
    session_timeout_s = float(sys.argv[1]) if len(sys.argv) > 1 else 0.3
    directory = tempfile.mkdtemp(prefix="kazoo-idle-")
    port = free_port()
    server = start_zookeeper(directory, port)
    try:
        zk = KazooClient(hosts=f"127.0.0.1:{port}", timeout=session_timeout_s)
        started = time.monotonic()
        stamp = lambda: f"{(time.monotonic() - started) * 1000:6.0f} ms"
        logging.basicConfig(level=logging.WARNING, stream=sys.stdout, format="%(message)s")
        logging.getLogger("kazoo").handlers.clear()
        for name in ("kazoo.client", "kazoo.protocol.connection"):
            logging.getLogger(name).addFilter(
                lambda record: setattr(record, "msg", f"{stamp()}  kazoo: {record.msg}") or True)
        pings = []
        send_ping = connection.ConnectionHandler._send_ping

        def traced_ping(handler, connect_timeout):
            pings.append(time.monotonic())
            gap = (pings[-1] - pings[-2]) * 1000 if len(pings) > 1 else 0
            over = "  > session timeout" if gap > session_timeout_s * 1000 else ""
            print(f"{stamp()}  ping sent, {gap:4.0f} ms after the previous one{over}", flush=True)
            return send_ping(handler, connect_timeout)

        connection.ConnectionHandler._send_ping = traced_ping
        states = []
        # A new session's first ping is not late: the gap is measured within one session.
        zk.add_listener(lambda state: (states.append(state), pings.clear(),
                                       print(f"{stamp()}  state {state}", flush=True)))
        zk.start(timeout=5)
        print(f"{stamp()}  connected, negotiated session timeout "
              f"{zk._session_timeout} ms requested; idle for 3 s")
        time.sleep(3)
        # stop() ends the session itself (state LOST): only what came before it counts.
        lost = any(str(s) in ("SUSPENDED", "LOST") for s in states)
        zk.stop()
        zk.close()
    finally:
        server.kill()
        server.wait()
    expired = [line.strip() for line in open(f"{directory}/zookeeper.log")
               if "Expiring session" in line]
    print(f"ZooKeeper's log ({directory}/zookeeper.log):", *expired, sep="\n  ")
    print("session LOST while idle" if lost else "session kept while idle")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
