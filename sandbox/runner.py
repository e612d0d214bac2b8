"""Roundtable's command runner: one long-lived process per sandbox container.

The bridge starts it once (a Docker exec with stdin attached) and then sends it commands over
that stream, which saves the ~40 ms the container runtime spends on every new exec.

Bridge -> runner: frames of a 4-byte big-endian length and a UTF-8 JSON object:
  {"op": "run", "id": N, "command": "...", "fsize": B, "disk": true}
                                             runs `bash -c command` in /workspace; with "fsize", no
                                             file it writes may grow past B bytes (RLIMIT_FSIZE, set
                                             by the shell's ulimit so the command cannot raise it);
                                             with "disk", the end reports the workspace's size
  {"op": "kill", "id": N}                    kills that command and all it started
Runner -> bridge: frames of a 9-byte header (length u32, kind u8, id u32) and a payload:
  H hello   JSON {"protocol", "pid", "oomKills"}            (id 0, once, at start)
  A accepted (empty): the request arrived; sent before the command is started
  S started JSON {"pid"}                                    (the command's pid = its session id)
  O output  raw bytes, stdout and stderr merged, never decoded here
  G gap     JSON {"skipped"}: bytes dropped between the head and the tail that follows
  E end     JSON {"exit", "killed", "oomKills", "error"} and, when asked, "disk" (bytes in /workspace)

Output is bounded here too: the first HEAD_BYTES go out as they come, then only the last
TAIL_BYTES are kept, so a command printing a gigabyte costs neither side more than a few KB.
HEAD_BYTES is at least 3 bytes per character of the bridge's 10000-character limit, so any
gap implies the bridge truncates anyway, and TAIL_BYTES covers its 2000-character tail.

Commands run in a session of their own. When one ends (or is killed), everything left in its
session is killed too, so a fork bomb's leftovers cannot hold every pid for the next command;
`setsid` lets a deliberate service outlive it. The runner itself never forks to clean up.
"""

import json
import os
import select
import signal
import struct
import sys
import time

PROTOCOL = 1
HEAD_BYTES = 32768
TAIL_BYTES = 8192
CHUNK = 65536
MAX_REQUEST = 16 * 1024 * 1024
# After a command ends and its session is killed, how long output may still trickle in
# from processes that left the session (setsid) before the command is reported anyway.
DRAIN_SECONDS = 2.0
HEADER = struct.Struct(">IBI")
OOM_FILES = ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control")
WORKSPACE = "/workspace"
# Entries one size measurement visits at most: a huge tree is reported as at least what was counted.
DISK_SCAN_LIMIT = 200000


def send(kind, ident, payload=b""):
    data = memoryview(HEADER.pack(len(payload), ord(kind), ident) + payload)
    while data:
        data = data[os.write(1, data):]


def send_json(kind, ident, value):
    send(kind, ident, json.dumps(value).encode())


def oom_kills():
    """The container's memory cgroup OOM-kill count (cgroup v2 or v1), to tell OOM from other kills."""
    for name in OOM_FILES:
        try:
            with open(name) as handle:
                for line in handle:
                    if line.startswith("oom_kill "):
                        return int(line.split()[1])
        except (OSError, ValueError):
            continue
    return 0


def disk_usage(root=WORKSPACE):
    """Bytes allocated under root (like `du -s`): files and folders, links not followed, one filesystem."""
    try:
        device = os.lstat(root).st_dev
    except OSError:
        return 0
    total = 0
    seen = 0
    stack = [root]
    while stack and seen < DISK_SCAN_LIMIT:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if info.st_dev != device:
                continue
            total += info.st_blocks * 512
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
    return total


def session_members(sid):
    """Live processes in session or group `sid` (zombies have closed their files already)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/" + entry + "/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != b"Z" and (int(fields[2]) == sid or int(fields[3]) == sid):
            found.append(int(entry))
    return found


def kill_session(sid):
    """Kills the group first (atomic against forks), then stragglers that changed group."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.killpg(sid, signal.SIGKILL)
        except OSError:
            pass
        members = [pid for pid in session_members(sid) if pid != os.getpid()]
        if not members:
            return
        for pid in members:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.002)


def find_shell():
    for path in ("/bin/bash", "/usr/bin/bash", "/bin/sh"):
        if os.access(path, os.X_OK):
            return path
    return "sh"


SHELL = find_shell()


def shell_argv(command, fsize):
    """The command's argv; with a file-size cap, the shell sets it (soft and hard) before running the command."""
    if fsize is None:
        return [SHELL, "-c", command]
    # bash counts ulimit -f in KiB, POSIX shells in 512-byte blocks.
    block = 1024 if SHELL.endswith("bash") else 512
    return [SHELL, "-c", 'ulimit -f %d || exit 126; exec "$0" -c "$1"' % (max(0, int(fsize)) // block), SHELL, command]


class Job:
    def __init__(self, ident, command, fsize=None, disk=False):
        self.ident = ident
        self.disk = disk
        self.pid = None
        self.pidfd = None
        self.out = None
        self.sent = 0
        self.tail = bytearray()
        self.skipped = 0
        self.status = None
        self.eof = False
        self.killed = False
        self.drain_until = None
        read_end, write_end = os.pipe()
        self.out = read_end
        os.set_blocking(read_end, False)
        try:
            self.pid = os.posix_spawn(
                SHELL,
                shell_argv(command, fsize),
                os.environ,
                file_actions=[
                    (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                    (os.POSIX_SPAWN_DUP2, write_end, 1),
                    (os.POSIX_SPAWN_DUP2, write_end, 2),
                ],
                setsid=True,
                # Python ignores SIGPIPE; a command must see the default (`yes | head` ends).
                setsigdef=(signal.SIGPIPE, signal.SIGXFSZ),
            )
        except BaseException:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)

    def watch(self):
        # Offer the command, not the runner, to the OOM killer first (raising needs no privilege).
        try:
            with open("/proc/%d/oom_score_adj" % self.pid, "w") as handle:
                handle.write("500")
        except OSError:
            pass
        try:
            self.pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            self.pidfd = None

    def read(self):
        """Forwards what the pipe has; notes the end of file."""
        while not self.eof:
            try:
                data = os.read(self.out, CHUNK)
            except BlockingIOError:
                return
            if not data:
                self.eof = True
                return
            if self.sent < HEAD_BYTES:
                part = data[: HEAD_BYTES - self.sent]
                send("O", self.ident, part)
                self.sent += len(part)
                data = data[len(part):]
            if data:
                self.tail += data
                if len(self.tail) > TAIL_BYTES:
                    self.skipped += len(self.tail) - TAIL_BYTES
                    del self.tail[:-TAIL_BYTES]

    def reap(self, block):
        if self.status is not None:
            return True
        pid, status = os.waitpid(self.pid, 0 if block else os.WNOHANG)
        if pid == 0:
            return False
        self.status = status
        kill_session(self.pid)
        self.drain_until = time.monotonic() + DRAIN_SECONDS
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None
        return True

    def kill(self):
        self.killed = True
        if self.status is None:
            kill_session(self.pid)

    def finish(self):
        self.read()
        os.close(self.out)
        if self.skipped:
            send_json("G", self.ident, {"skipped": self.skipped})
        if self.tail:
            send("O", self.ident, bytes(self.tail))
        code = os.waitstatus_to_exitcode(self.status)
        end = {"exit": 128 - code if code < 0 else code, "killed": self.killed, "oomKills": oom_kills(), "error": None}
        if self.disk:
            end["disk"] = disk_usage()
        send_json("E", self.ident, end)


def main():
    os.set_blocking(0, False)
    send_json("H", 0, {"protocol": PROTOCOL, "pid": os.getpid(), "oomKills": oom_kills()})
    jobs = {}
    inbox = bytearray()
    stdin_open = True
    while stdin_open or jobs:
        readers = [0] if stdin_open else []
        timeout = None
        now = time.monotonic()
        for job in jobs.values():
            if job.status is None:
                if job.pidfd is not None:
                    readers.append(job.pidfd)
                else:
                    timeout = 0.02 if timeout is None else min(timeout, 0.02)
            else:
                wait = max(0.0, job.drain_until - now)
                timeout = wait if timeout is None else min(timeout, wait)
            if not job.eof:
                readers.append(job.out)
        ready = set(select.select(readers, [], [], timeout)[0])

        if 0 in ready:
            try:
                data = os.read(0, CHUNK)
            except BlockingIOError:
                data = None
            if data == b"":
                # The bridge is gone: nothing it started may outlive it.
                stdin_open = False
                for job in jobs.values():
                    job.kill()
            elif data:
                inbox += data
            while len(inbox) >= 4:
                (length,) = struct.unpack(">I", inbox[:4])
                if length > MAX_REQUEST:
                    sys.stderr.write("request of %d bytes refused\n" % length)
                    return 2
                if len(inbox) < 4 + length:
                    break
                request = json.loads(inbox[4: 4 + length].decode())
                del inbox[: 4 + length]
                handle(request, jobs)

        for ident, job in list(jobs.items()):
            if job.out in ready:
                job.read()
            if job.status is None and (job.pidfd is None or job.pidfd in ready):
                job.reap(block=job.pidfd is not None)
            if job.status is not None and (job.eof or time.monotonic() >= job.drain_until):
                del jobs[ident]
                job.finish()
    return 0


def handle(request, jobs):
    ident = int(request.get("id", 0))
    if request.get("op") == "kill":
        job = jobs.get(ident)
        if job is not None:
            job.kill()
        return
    if request.get("op") != "run":
        return
    # Before spawning: if we die without this, the bridge knows the command never ran.
    send("A", ident)
    try:
        job = Job(ident, request["command"], request.get("fsize"), bool(request.get("disk")))
    except Exception as error:  # e.g. EAGAIN: a fork bomb's leftovers still hold every pid
        send_json("E", ident, {"exit": None, "killed": False, "oomKills": oom_kills(), "error": str(error)})
        return
    jobs[ident] = job
    # At once, before anything else: the bridge needs the pid to clean up if the command kills us.
    send_json("S", ident, {"pid": job.pid})
    job.watch()


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        sys.exit(main())
    except BrokenPipeError:
        sys.exit(0)
