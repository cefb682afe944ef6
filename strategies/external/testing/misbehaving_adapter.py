#!/usr/bin/python3
"""A test adapter that answers init (and the probe) correctly, then breaks the protocol on its
Nth acquire in the way its first argument names (external_strategy_test.cpp):

  garbage       a line that is not JSON
  wrong-id      an answer to an id nobody asked
  late          no answer at all (silence)
  exit          exits with status 3
  close-stdout  closes its standard output and keeps running
  lost          grants, then sends an unsolicited `lost` for the grant
  late-grant    answers `timeout` (in doubt), then says the library granted that acquire late
                (`late_grant` granted, token late-N) and that its release of it ended (released,
                ok), naming the acquire by its request's id; later acquires are granted again
  late-grant-second  answers the Nth and the next acquire `timeout`, then says the library granted
                the second of them late (by its id, token late-N+1) and released it; later
                acquires are granted again
  abandoned     answers `timeout`, then says the library gave that acquire up and whatever it held
                is gone (`late_grant` abandoned, by its id); later acquires are granted again
  refused       refuses with `refused` (definite, no holder seen), as Redlock's adapter does
  ok            never misbehaves (nor do lease and bad-lease on acquire)
  lease         init_ok answers lease_ms as etcd would apply init's options.lease_ms: whole
                seconds, at least 2 s
  bad-lease     init_ok answers lease_ms 0 when init carries options.lease_ms
  grant-lease   every acquire_ok carries lease_ms as etcd would apply the acquire's lease_ms
                (whole seconds, at least 2 s); init_ok says nothing of the lease
  grant-lease-negative, grant-lease-string, grant-lease-huge
                the Nth acquire_ok carries lease_ms -1, "5000" (a string), or 10^13
  init-unsupported  the probe's init is answered, every client's init refused as `unsupported`

Second argument: N (default 1). Before that it grants every acquire. Every init's `clients` goes to
its standard error ("init clients [...]"). A third argument
`concurrent` declares the capability (it answers each request at once, so it holds), for runs
that pack several clients into it.
"""
import json
import os
import sys
import time

mode = sys.argv[1]
nth = int(sys.argv[2]) if len(sys.argv) > 2 else 1
acquires = 0
concurrent = "concurrent" in sys.argv[3:]


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    req = json.loads(line)
    rid = req["id"]
    kind = req["type"]
    if kind == "init" and req.get("clients") and mode == "init-unsupported":
        send({"in_reply_to": rid, "type": "error", "code": "unsupported",
              "text": "test: this server is not supported"})
        continue
    if kind == "init":
        # The clients it serves, in its log: a packed process's init must list them all.
        print("init clients " + json.dumps(req.get("clients")), file=sys.stderr, flush=True)
        answer = {"in_reply_to": rid, "type": "init_ok", "library": "misbehaving-" + mode,
                  "version": "0", "services": [],
                  "capabilities": {"renew": True, "concurrent": concurrent}}
        asked = req.get("options", {}).get("lease_ms")
        if asked is not None and mode == "lease":
            answer["lease_ms"] = max(2, -(-asked // 1000)) * 1000
        elif asked is not None and mode == "bad-lease":
            answer["lease_ms"] = 0
        send(answer)
        continue
    if kind == "time":
        send({"in_reply_to": rid, "type": "time_ok", "unix_ms": int(time.time() * 1000)})
        continue
    if kind != "acquire":
        send({"in_reply_to": rid, "type": kind + "_ok"})
        continue
    acquires += 1
    if mode == "grant-lease":
        send({"in_reply_to": rid, "type": "acquire_ok", "token": "t%d" % acquires,
              "lease_ms": max(2, -(-req["lease_ms"] // 1000)) * 1000})
        continue
    if acquires < nth or mode in ("ok", "lease", "bad-lease") or (
            mode in ("late-grant", "abandoned") and acquires > nth) or (
            mode == "late-grant-second" and acquires > nth + 1):
        send({"in_reply_to": rid, "type": "acquire_ok", "token": "t%d" % acquires})
        continue
    if mode == "garbage":
        sys.stdout.write("this is not json\n")
        sys.stdout.flush()
    elif mode == "wrong-id":
        send({"in_reply_to": rid + 1000, "type": "acquire_ok", "token": "x"})
    elif mode == "late":
        pass
    elif mode == "exit":
        sys.exit(3)
    elif mode == "close-stdout":
        os.close(1)
        while True:
            time.sleep(1)
    elif mode == "refused":
        send({"in_reply_to": rid, "type": "error", "code": "refused", "text": "no quorum"})
    elif mode.startswith("grant-lease-"):
        bad = {"negative": -1, "string": "5000", "huge": 10 ** 13}[mode[len("grant-lease-"):]]
        send({"in_reply_to": rid, "type": "acquire_ok", "token": "t%d" % acquires, "lease_ms": bad})
    elif mode in ("late-grant", "late-grant-second"):
        send({"in_reply_to": rid, "type": "error", "code": "timeout", "text": "test: no answer"})
        if mode == "late-grant-second" and acquires == nth:
            continue
        late = {"type": "late_grant", "client": req["client"], "key": req["key"], "id": rid,
                "token": "late-%d" % acquires}
        send(dict(late, phase="granted"))
        send(dict(late, phase="released", ok=True))
    elif mode == "abandoned":
        send({"in_reply_to": rid, "type": "error", "code": "timeout", "text": "test: no answer"})
        send({"type": "late_grant", "client": req["client"], "key": req["key"], "id": rid,
              "phase": "abandoned"})
    elif mode == "lost":
        send({"in_reply_to": rid, "type": "acquire_ok", "token": "t%d" % acquires})
        send({"type": "lost", "client": req["client"], "key": req["key"],
              "token": "t%d" % acquires, "text": "test: the lock was lost"})
