#!/usr/bin/env python3
"""Drive a machine's serial console like a user at a terminal.

    console.py [--timeout S] [--log FILE] [--times FILE] SCRIPT -- COMMAND...

Runs COMMAND with its stdin and stdout on pipes and follows SCRIPT, one step
per line:
    expect REGEX     wait until the output (since the last match) matches
    send TEXT        type TEXT and a newline
    exit STATUS      wait for COMMAND to end with this exit status
    mark LABEL       note the time (a no-op without --times)
    host CMD         run the shell command CMD on the host (its output goes
                     to the log); the step fails unless it exits 0
Prints the whole console output at the end (or to --log). Exits 0 when every
step passed, 1 with the failing step on stderr otherwise (a timeout, a
mismatch, the command ending early or with another status).

--times FILE writes one "LABEL SECONDS" line per mark step reached, SECONDS
since COMMAND started (an expect's time is when its match was read), and
"exit SECONDS" when an exit step saw COMMAND end.
"""

import argparse
import os
import re
import select
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=float, default=120, help="seconds per step")
    ap.add_argument("--log", help="write the console output here")
    ap.add_argument("--times", help="write the mark steps' times here")
    ap.add_argument("script")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    steps = [l.rstrip("\n").split(" ", 1) for l in open(a.script) if l.strip()]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    marks = []
    out, seen, ok, why = b"", 0, True, ""
    for step in steps:
        verb, arg = step[0], step[1] if len(step) > 1 else ""
        deadline = time.monotonic() + a.timeout
        if verb == "send":
            p.stdin.write(arg.encode() + b"\n")
            p.stdin.flush()
            continue
        if verb == "expect":
            rx = re.compile(arg.encode())
            while True:
                m = rx.search(out, seen)
                if m:
                    seen = m.end()
                    break
                left = deadline - time.monotonic()
                if left <= 0 or p.poll() is not None and not select.select([p.stdout], [], [], 0)[0]:
                    ok, why = False, f"expect {arg!r}: " + ("timeout" if left <= 0 else "ended")
                    break
                r, _, _ = select.select([p.stdout], [], [], min(left, 1.0))
                if r:
                    chunk = os.read(p.stdout.fileno(), 65536)
                    if not chunk and p.poll() is not None:
                        continue
                    out += chunk
            if not ok:
                break
            continue
        if verb == "host":
            r = subprocess.run(arg, shell=True, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=a.timeout)
            out += b"\n[host] " + arg.encode() + b"\n" + r.stdout
            seen = len(out)
            if r.returncode != 0:
                ok, why = False, f"host {arg!r}: exit status {r.returncode}"
                break
            continue
        if verb == "mark":
            marks.append((arg, time.monotonic() - t0))
            continue
        if verb == "exit":
            try:
                rest, _ = p.communicate(timeout=max(deadline - time.monotonic(), 0.1))
                out += rest
            except subprocess.TimeoutExpired:
                ok, why = False, "exit: timeout"
                break
            marks.append(("exit", time.monotonic() - t0))
            if p.returncode != int(arg):
                ok, why = False, f"exit status {p.returncode}, expected {arg}"
            break
        ok, why = False, f"bad script step {verb!r}"
        break
    if p.poll() is None:
        p.kill()
        rest, _ = p.communicate()
        out += rest
    text = out.decode(errors="replace")
    if a.log:
        with open(a.log, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if a.times:
        with open(a.times, "w") as f:
            f.writelines(f"{label} {t:.3f}\n" for label, t in marks)
    if not ok:
        print(f"console.py: {why}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
