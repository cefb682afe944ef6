#!/usr/bin/python3
"""Passes when scripts/adapter-contract fails an adapter as expected: exit status 1 and a FAIL line
matching PATTERN (a regular expression). Prints the runner's output either way.

usage: expect_contract_failure.py RUNNER "CLIENT COMMAND" PATTERN
"""
import re
import shutil
import subprocess
import sys


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    runner, command, pattern = sys.argv[1:]
    run = subprocess.run([runner, "--client-command", command], capture_output=True, text=True)
    print(run.stdout, end="")
    print(run.stderr, end="", file=sys.stderr)
    # The runner keeps the adapters' logs of a failed run; this failure is the expected one.
    for kept in re.findall(r"adapter logs in (\S+)", run.stderr):
        shutil.rmtree(kept, ignore_errors=True)
    if run.returncode != 1:
        sys.exit(f"expected exit status 1, got {run.returncode}")
    if not re.search(pattern, run.stdout, re.MULTILINE):
        sys.exit(f"no line matches {pattern!r}")


if __name__ == "__main__":
    main()
