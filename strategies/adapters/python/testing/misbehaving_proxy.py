#!/usr/bin/python3
"""Runs an adapter and breaks its protocol in one chosen way, to prove that scripts/adapter-contract
fails such an adapter (each of its checks must be able to fail).

usage: misbehaving_proxy.py FAULT KEY ADAPTER [ARGS...]

FAULT, applied to the answers to `acquire` requests for KEY (`*`: every key):
  timeout-is-held  an in-doubt error (a timeout) is passed on as the definite `held`
  garbage          the answer is replaced by a line that is not JSON
  wrong-id         the answer names another request's id
  silent           the answer is never sent
  exit             the proxy and its adapter exit instead of answering
"""
import json
import os
import subprocess
import sys
import threading

DEFINITE = ("held", "not-held", "unsupported")


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("timeout-is-held", "garbage", "wrong-id", "silent", "exit"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    fault, key, command = sys.argv[1], sys.argv[2], sys.argv[3:]
    adapter = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    targeted = set()  # ids of the acquire requests for KEY

    def forward_requests():
        for line in sys.stdin.buffer:
            request = json.loads(line)
            if request.get("type") == "acquire" and key in ("*", request.get("key")):
                targeted.add(request["id"])
            adapter.stdin.write(line)
            adapter.stdin.flush()
        adapter.stdin.close()

    threading.Thread(target=forward_requests, daemon=True).start()
    for line in adapter.stdout:
        answer = json.loads(line)
        if answer.get("in_reply_to") in targeted:
            if fault == "timeout-is-held" and answer["type"] == "error" and answer["code"] not in DEFINITE:
                line = json.dumps(dict(answer, code="held")).encode() + b"\n"
            elif fault == "garbage":
                line = b"granted!\n"
            elif fault == "wrong-id":
                line = json.dumps(dict(answer, in_reply_to=answer["in_reply_to"] + 1000)).encode() + b"\n"
            elif fault == "silent":
                continue
            elif fault == "exit":
                adapter.kill()
                os._exit(3)
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
    sys.exit(adapter.wait())


if __name__ == "__main__":
    main()
