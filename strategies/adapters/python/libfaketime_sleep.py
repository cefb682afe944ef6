"""time.sleep for Python adapters under lockbench's clock skew (PROTOCOL.md: a skewed clock).

lockbench skews an adapter's wall clock with Debian's libfaketime 0.9.10 and leaves the monotonic
clock real (FAKETIME_DONT_FAKE_MONOTONIC=1). Python 3.11's time.sleep sleeps with
clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, deadline), and libfaketime 0.9.10 rewrites such a
deadline as if the monotonic clock were faked, ignoring that setting (fixed upstream after 0.9.10,
libfaketime issue #426): the kernel gets a negative time and every sleep raises EINVAL, so a
redis-py acquire that had to wait between attempts failed. Faking the monotonic clock instead is no
way out: Python's timed lock and condition waits then never wake. A select() timeout is relative,
which libfaketime passes on (scaled by a drift's rate, as it scales every relative sleep).

install() must run before the library is imported: kazoo binds time.sleep as a default argument.
"""
import os
import select
import time


def relative_sleep(seconds):
    if seconds < 0:
        raise ValueError("sleep length must be non-negative")
    select.select([], [], [], seconds)  # an EINTR resumes with the remaining time (PEP 475)


def install():
    """Replaces time.sleep when this process runs under libfaketime with a real monotonic clock."""
    if "faketime" in os.environ.get("LD_PRELOAD", "") and \
            os.environ.get("FAKETIME_DONT_FAKE_MONOTONIC") == "1":
        time.sleep = relative_sleep
