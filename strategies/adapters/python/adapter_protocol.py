"""The request loop of strategies/adapters/PROTOCOL.md, shared by the Python adapters: one JSON
request a line on stdin, one answer a line on stdout (logs go to stderr), until stdin closes.

Import it after libfaketime_sleep.install(): it imports nothing that binds time.sleep.
"""
import json
import sys
import time


def error(code, text):
    return {"type": "error", "code": code, "text": text}


def serve(handlers, send, log, classify=lambda e: None,
          unsupported=lambda kind: f"unknown request type {kind!r}"):
    """Answers each request with handlers[type](request) (`time` is answered here). An exception is
    answered with classify(e), the error answer for the ones the adapter can name, or, when it
    returns None, as `unknown`: anything unclassified is in doubt (PROTOCOL.md, Errors)."""
    for line in sys.stdin:
        request = json.loads(line)
        kind = request.get("type")
        try:
            if kind == "time":
                answer = {"type": "time_ok", "unix_ms": int(time.time() * 1000)}
            elif kind in handlers:
                answer = handlers[kind](request)
            else:
                answer = error("unsupported", unsupported(kind))
        except Exception as e:
            answer = classify(e)
            if answer is None:
                log(f"{kind} failed: {e!r}")
                answer = error("unknown", f"{type(e).__name__}: {e}")
        answer["in_reply_to"] = request.get("id")
        send(answer)
