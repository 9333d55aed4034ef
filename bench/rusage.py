#!/usr/bin/env python3
"""rusage.py OUT COMMAND...: run COMMAND with its stdout in OUT; print "wall cpu maxrss".

wall: seconds from the start to the command's exit; cpu: its user + system seconds as wait4
gives them, to the microsecond (/usr/bin/time prints hundredths: 0.1 us a request at 100 000
requests); maxrss: its peak resident set in KB, from /usr/bin/time, which runs it (a child
forked from this interpreter would carry the interpreter's peak over its exec). The cpu
includes /usr/bin/time's own, well under a millisecond. The exit status is the command's.
"""
import os
import sys
import tempfile
import time


def main() -> int:
    out, command = sys.argv[1], sys.argv[2:]
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        start = time.monotonic_ns()
        pid = os.fork()
        if pid == 0:
            fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, 1)
            os.close(fd)
            try:
                os.execv("/usr/bin/time", ["/usr/bin/time", "-f", "%M", "-o", rss.name, *command])
            except OSError as error:
                print(f"rusage.py: cannot run /usr/bin/time: {error}", file=sys.stderr)
            os._exit(127)
        _, status, usage = os.wait4(pid, 0)
        wall = (time.monotonic_ns() - start) / 1e9
        lines = rss.read().split()
        peak_kb = lines[-1] if lines else "0"
    print(f"{wall:.6f} {usage.ru_utime + usage.ru_stime:.6f} {peak_kb}")
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
