"""An adapter process driven through PROTOCOL.md by the adapters' own tests: requests as client
c0 (or another), answers and unsolicited messages read as they come, each wait bounded by one
deadline for the whole test.
"""
import contextlib
import importlib.machinery
import importlib.util
import json
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time


class AdapterUnderTest:
    def __init__(self, path, deadline_s, fail, command=None):
        """`path`: a Python adapter; or `command`, the argv of any other."""
        self.proc = subprocess.Popen(command or ["/usr/bin/python3", path], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=sys.stderr)
        self.messages = queue.Queue()
        threading.Thread(target=self.read, daemon=True).start()
        self.next_id = 1
        self.until = time.monotonic() + deadline_s
        self.fail = fail

    def read(self):
        for line in self.proc.stdout:
            self.messages.put(json.loads(line))

    def next_message(self):
        try:
            return self.messages.get(timeout=max(0.0, self.until - time.monotonic()))
        except queue.Empty:
            self.fail("no message from the adapter in time")

    def send(self, request, client="c0"):
        """Sends `request` as `client`; returns its id."""
        request = dict(request, id=self.next_id, client=client)
        self.next_id += 1
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()
        return request["id"]

    def call(self, request, skipping=(), client="c0"):
        """Sends `request` and returns its answer; unsolicited messages of the types in `skipping`
        that come first are passed over, any other fails the test."""
        request = dict(request, id=self.send(request, client))
        while True:
            answer = self.next_message()
            if answer.get("in_reply_to") == request["id"]:
                return answer
            if answer.get("type") not in skipping:
                self.fail(f"expected the answer to request {request['id']}, got {answer}")

    def kill(self):
        self.proc.kill()


def load_contract(path):
    """scripts/adapter-contract as a module: its Servers start ZooKeeper, Redis and etcd as the
    contract's checks do."""
    loader = importlib.machinery.SourceFileLoader("adapter_contract", path)
    spec = importlib.util.spec_from_loader("adapter_contract", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


@contextlib.contextmanager
def contract_servers(contract_runner, prefix):
    """The Servers of scripts/adapter-contract (at `contract_runner`) in a scratch folder named
    from `prefix`: every server they provided is stopped and the folder removed on the way out."""
    contract = load_contract(contract_runner)
    workdir = tempfile.mkdtemp(prefix=prefix)
    servers = contract.Servers(workdir)
    try:
        yield servers
    finally:
        servers.stop()
        shutil.rmtree(workdir, ignore_errors=True)
