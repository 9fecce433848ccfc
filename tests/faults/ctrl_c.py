#!/usr/bin/env python3
"""Ctrl-C typed at a terminal, for scripts/faults: runs a command on a new
pseudo-terminal (its controlling terminal, the command in the foreground
process group, as in a shell) and types Ctrl-C there: the kernel sends SIGINT
to the whole foreground group, truewatt and the program it runs alike.

usage: ctrl_c.py READY_FILE TIMES GAP_S TIMEOUT_S -- COMMAND...
  waits for READY_FILE to exist and GAP_S more, types ^C, then TIMES - 1 more, GAP_S apart
  (fewer if the command ends first), waits for the command's end (at most
  TIMEOUT_S after the first ^C: it is then killed), copies its terminal output
  to stdout and prints a last line "status N seconds S typed K" (N: its exit
  status, 128 + N when signal N killed it, "killed" when it had to be; S:
  seconds from the last ^C to its end; K: how many ^C were typed).
"""
import os
import pty
import select
import sys
import time

out = bytearray()
status = []


def pump(pid, fd, seconds):
    """Copies the terminal's output for up to that long; True once the command ended."""
    end = time.monotonic() + seconds
    while not status:
        got, st = os.waitpid(pid, os.WNOHANG)
        if got == pid:
            status.append(st)
            break
        left = end - time.monotonic()
        if left <= 0:
            return False
        r, _, _ = select.select([fd], [], [], min(left, 0.05))
        if r:
            try:
                out.extend(os.read(fd, 65536))
            except OSError:
                pass
    try:  # what is left in the terminal
        while select.select([fd], [], [], 0)[0]:
            data = os.read(fd, 65536)
            if not data:
                break
            out.extend(data)
    except OSError:
        pass
    return True


def main():
    ready, times, gap, timeout = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
    cmd = sys.argv[sys.argv.index("--") + 1:]
    try:
        pid, fd = pty.fork()
    except OSError as e:  # no pseudo-terminals here (a container without devpts)
        return without_pty(cmd, ready, times, gap, timeout, e)
    if pid == 0:
        os.execvp(cmd[0], cmd)
    while not os.path.exists(ready) and not pump(pid, fd, 0.05):
        pass
    pump(pid, fd, gap)  # the program under way
    typed, first, last = 0, time.monotonic(), time.monotonic()
    while typed < times and not status:
        os.write(fd, b"\x03")
        typed += 1
        last = time.monotonic()
        if typed < times:
            pump(pid, fd, gap)
    pump(pid, fd, max(0.0, timeout - (time.monotonic() - first)))
    if not status:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        result = "killed"
    else:
        code = os.waitstatus_to_exitcode(status[0])
        result = str(128 - code if code < 0 else code)
    sys.stdout.write(out.decode(errors="replace").replace("\r\n", "\n"))
    print(f"status {result} seconds {time.monotonic() - last:.2f} typed {typed}")
    return 0


def without_pty(cmd, ready, times, gap, timeout, why):
    """The same without a terminal: the command in a process group of its own, SIGINT sent to
    the group as the terminal would (the kernel's; here a process's, so truewatt forwards it to
    the program once more: the program sees two where a terminal gives one)."""
    import signal
    import subprocess
    print(f"ctrl_c.py: no pseudo-terminal ({why}): SIGINT to the process group instead")
    import tempfile
    log = tempfile.TemporaryFile()  # not a pipe: a program left running would hold it open
    p = subprocess.Popen(cmd, start_new_session=True, stdout=log, stderr=subprocess.STDOUT)
    while not os.path.exists(ready) and p.poll() is None:
        time.sleep(0.05)
    time.sleep(gap)
    typed, first, last = 0, time.monotonic(), time.monotonic()
    while typed < times and p.poll() is None:
        os.killpg(p.pid, signal.SIGINT)
        typed += 1
        last = time.monotonic()
        if typed < times:
            time.sleep(gap)
    try:
        p.wait(max(0.0, timeout - (time.monotonic() - first)))
        result = str(128 - p.returncode if p.returncode < 0 else p.returncode)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        result = "killed"
    took = time.monotonic() - last
    log.seek(0)
    sys.stdout.write(log.read().decode(errors="replace"))
    print(f"status {result} seconds {took:.2f} typed {typed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
