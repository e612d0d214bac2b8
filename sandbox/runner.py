"""Roundtable's command runner: one long-lived process per sandbox container.

The bridge starts it once (a Docker exec with stdin attached) and then sends it commands over
that stream, which saves the ~40 ms the container runtime spends on every new exec.

Bridge -> runner: frames of a 4-byte big-endian length and a UTF-8 JSON object:
  {"op": "run", "id": N, "command": "...", "fsize": B, "disk": true, "quota": {...}}
                                             runs `bash -c command` in /workspace; with "fsize", no
                                             file it writes may grow past B bytes (RLIMIT_FSIZE, set
                                             by the shell's ulimit so the command cannot raise it);
                                             with "disk", the end reports the workspace's size and
                                             entry count; with "quota" ({"bytes", "files": limits,
                                             0 = none; "usedBytes", "usedFiles": the workspace when
                                             the command starts}), the workspace is watched while it
                                             runs and the command stopped when it grows it past a limit
  {"op": "kill", "id": N}                    kills that command and all it started
Runner -> bridge: frames of a 9-byte header (length u32, kind u8, id u32) and a payload:
  H hello   JSON {"protocol", "pid", "oomKills"}            (id 0, once, at start)
  A accepted (empty): the request arrived; sent before the command is started
  S started JSON {"pid"}                                    (the command's pid = its session id)
  O output  raw bytes, stdout and stderr merged, never decoded here
  G gap     JSON {"skipped"}: bytes dropped between the head and the tail that follows
  E end     JSON {"exit", "killed", "oomKills", "error"}; when asked, "disk" and "files" (bytes and
            entries in /workspace); "quota" ("disk" or "files") when the watch stopped the command

Output is bounded here too: the first HEAD_BYTES go out as they come, then only the last
TAIL_BYTES are kept, so a command printing a gigabyte costs neither side more than a few KB.
HEAD_BYTES is at least 3 bytes per character of the bridge's 10000-character limit, so any
gap implies the bridge truncates anyway, and TAIL_BYTES covers its 2000-character tail.

Commands run in a session of their own. When one ends (or is killed), everything left in its
session is killed too, so a fork bomb's leftovers cannot hold every pid for the next command;
`setsid` lets a deliberate service outlive it. The runner itself never forks to clean up.

The workspace watch: RLIMIT_FSIZE caps each file, not the folder, and nothing caps the number
of files, so while a command with a quota runs the workspace is measured every WATCH_INTERVAL
(further apart when a measurement is costly: at most a fifth of a CPU goes to measuring), a
slice at a time between the other work, and a command that takes the workspace past a limit is
killed with its session. A workspace already over a limit may shrink (`rm` works) but not grow:
the allowance of such a command is the lowest size seen since it started. The runner remembers
the tree between measurements (Tree), so a look examines only what changed.

A look takes time, and a fast writer (`seq 1 300000 | xargs touch` makes 100,000 files in under a
second) would run far past a limit between two. So every GAUGE_INTERVAL (GAUGE_FAST_INTERVAL when a
limit is near at the rate they grow) the runner also reads the counters of the workspace's file
system (statvfs: blocks and inodes in use), which cost a few microseconds: the workspace cannot have
grown by more than the counters rose since it was last measured (Allowance.rebase; falls are not
taken off, see Meter). When that
growth would take it past an allowance, every watched command is paused (SIGSTOP to its session),
the workspace is measured to the end, and each command is then stopped or let go on (SIGCONT). The
file system is shared (other rooms, the host), so its growth is only an upper bound: the measurement
decides, never the counters; and the time paused is drawn from a budget (PauseBudget). Commands run
at a lower priority than the runner (nice COMMAND_NICE) so that it gets its turn among their
processes.

Its turn may still come late: on a busy machine the runner can wait milliseconds for a CPU while a
writer on the other one fills gigabytes a second. So the kernel keeps a wall that needs no turn: the
file-size limit (RLIMIT_FSIZE) of the commands' processes. Set to what was left when the command
started (the bridge's "fsize", the hard limit), it is lowered as the workspace fills: each time the
file system grew by a twentieth of the allowance (WALL_STEP) into the room the wall leaves, the
workspace is measured at once (without pausing: a pause cuts short a read under way) and each
process of the session may then grow a file by what is left plus a margin (WALL_MARGIN) beyond the
largest it has open for writing, or make a new one that big (wall_session). A measurement counts each
file at most as large as it is when the wall is set, so the file system's counters, which others
share, never make a write fail; every complete look sets the wall again (higher when the command
removed files; never past the hard limit). A write past the wall fails (EFBIG, SIGXFSZ) at once, and
the margin takes the workspace past the allowance, so the watch then stops the command as usual; a
write refused whole (fallocate) leaves it full instead. What a late turn lets past is now what the
open files grew by since the last measurement, plus a wall's worth per new file, not all they write.
"""

import json
import os
import select
import signal
import stat
import struct
import sys
import time

try:
    import resource
except ImportError:  # a Python without it: the watch alone holds the allowance
    resource = None

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
# Entries one measurement visits at most (unless a file limit asks for more): a huge tree is
# reported as at least what was counted.
DISK_SCAN_LIMIT = 200000
# The workspace watch: first look this long after a command starts (short commands cost nothing),
# then every WATCH_INTERVAL, or WATCH_COST_FACTOR times the CPU time a look took when that is
# longer, so looking takes at most a fifth of a CPU however large the workspace.
WATCH_INTERVAL = 0.1
WATCH_COST_FACTOR = 4
# Units of work (an lstat, or a few entries summed) one slice of a look does before output and
# requests get their turn.
SCAN_SLICE = 2048
# A look examines again the files changed this recently; the others are taken as they were, and
# a full pass, at most every FULL_SECONDS (or FULL_COST_FACTOR times its CPU time), checks them.
HOT_SECONDS = 2.0
FULL_SECONDS = 5.0
FULL_COST_FACTOR = 20
# How often the file system's counters are read while a watched command runs.
GAUGE_INTERVAL = 0.002
# ... and how often when, at the rate it grows, a limit could be reached within two readings.
GAUGE_FAST_INTERVAL = 0.0005
# Seconds commands may be kept paused for measuring at once (see PauseBudget).
PAUSE_BURST = 2.0
# Niceness of the commands, so that the runner (0) is scheduled before them.
COMMAND_NICE = 10
# The file-size wall (see wall_session): lowered each time the file system grew by 1/WALL_STEP of the
# disk allowance into the room it leaves; it lets a file grow past what is left by 1/WALL_MARGIN of it.
WALL_STEP = 20
WALL_MARGIN = 64


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


class Tree:
    """What the workspace holds, remembered between looks so that a look costs little: a folder whose
    modification time and inode are unchanged keeps its list of entries, and of its files only those
    changed in the last HOT_SECONDS (by ctime, which no command can set back) are examined again. A
    full pass examines everything; it comes first, then at most every FULL_SECONDS (further apart
    when it is costly), and catches what a look cannot see: an old file grown in place."""

    def __init__(self, root=WORKSPACE):
        self.root = root
        # folder path -> (mtime_ns, inode, {name: (is_dir, inode, blocks, nlink, ctime)})
        self.folders = {}
        self.full_due = 0.0
        self.full_cost = 0.0
        # When the last complete look started: files changed since then are still hot for a while.
        self.last_complete = float("-inf")

    def look(self, cap=DISK_SCAN_LIMIT, stop_above=None, exact=False):
        """The next look; `exact`: it must see every change since the last complete look (a full pass
        unless that look is recent enough for the files changed since to be hot)."""
        now = time.monotonic()
        full = now >= self.full_due or (exact and now - self.last_complete > HOT_SECONDS / 2)
        return Look(self, full, cap, stop_above or {})

    def examine(self, path):
        info = os.lstat(path)
        return (stat.S_ISDIR(info.st_mode), info.st_ino, info.st_blocks * 512, info.st_nlink, info.st_ctime)

    def walk(self, look):
        """The look, as a generator that yields every so often (after a unit of work: one lstat or
        a few entries summed), so the main loop can forward output in between."""
        try:
            device = os.lstat(self.root).st_dev
        except OSError:
            return
        hot_after = time.time() - HOT_SECONDS
        seen = set()
        stack = [self.root]
        while stack:
            path = stack.pop()
            try:
                info = os.lstat(path)
            except OSError:
                continue
            yield 1
            if info.st_dev != device:
                continue
            known = self.folders.get(path)
            if look.full or known is None or known[0] != info.st_mtime_ns or known[1] != info.st_ino:
                children = {}
                old = known[2] if known is not None else {}
                try:
                    with os.scandir(path) as entries:
                        for entry in entries:
                            node = old.get(entry.name)
                            if look.full or node is None or node[1] != entry.inode() or node[4] >= hot_after:
                                try:
                                    node = self.examine(entry.path)
                                except OSError:
                                    continue
                                yield 1
                            children[entry.name] = node
                except OSError:
                    continue
                self.folders[path] = (info.st_mtime_ns, info.st_ino, children)
            else:
                # A list of entries, once stored, is never changed: another look may be reading it.
                children = known[2]
                updated = None
                for name, node in children.items():
                    if node[4] >= hot_after:
                        updated = updated or dict(children)
                        try:
                            updated[name] = self.examine(os.path.join(path, name))
                        except OSError:
                            del updated[name]
                        yield 1
                if updated is not None:
                    children = updated
                    self.folders[path] = (known[0], known[1], children)
            seen.add(path)
            for count, (name, node) in enumerate(children.items()):
                look.add(node)
                if node[0]:
                    stack.append(os.path.join(path, name))
                if look.stopped_early:
                    return
                if count % 32 == 31:
                    yield 1
        # Folders that were not reached are gone (or moved): forget them.
        for path in [path for path in self.folders if path not in seen]:
            del self.folders[path]


class Look:
    """One measurement of the workspace like `du -s` plus an entry count: every file, folder and
    link below the root counts as one entry and its allocated blocks (a hard-linked file's once);
    links are not followed, other file systems not entered. Done a slice at a time (`step`); it
    stops after `cap` entries, or once past `stop_above` ({"disk": bytes, "files": entries}: a
    watch needs to know no more)."""

    def __init__(self, tree, full, cap, stop_above):
        self.tree = tree
        self.full = full
        self.bytes = 0
        self.files = 0
        self.cap = cap
        self.stop_bytes = stop_above.get("disk", float("inf"))
        self.stop_files = stop_above.get("files", float("inf"))
        self.cost = 0.0
        # The file system's counters as the look starts (see Allowance.suspect).
        self.gauge = METER.read()
        self.started = time.monotonic()
        self.linked = set()
        self.steps = tree.walk(self)
        self.finished = False

    def add(self, node):
        self.files += 1
        if node[3] > 1 and not node[0]:
            if node[1] in self.linked:
                return
            self.linked.add(node[1])
        self.bytes += node[2]

    @property
    def stopped_early(self):
        return self.files >= self.cap or self.bytes > self.stop_bytes or self.files > self.stop_files

    @property
    def done(self):
        return self.finished

    def step(self, budget):
        """Does up to `budget` units of work; True when the measurement is complete (or stopped)."""
        begun = time.process_time()
        try:
            for _ in range(budget):
                if next(self.steps, None) is None:
                    self.finished = True
                    break
        finally:
            self.cost += time.process_time() - begun
        if self.finished and not self.stopped_early:
            self.tree.last_complete = max(self.tree.last_complete, self.started)
        if self.finished and self.full and not self.stopped_early:
            self.tree.full_cost = self.cost
            self.tree.full_due = time.monotonic() + max(FULL_SECONDS, FULL_COST_FACTOR * self.cost)
        return self.finished

    def close(self):
        self.steps.close()
        self.finished = True


TREE = Tree()


def fs_used(path=WORKSPACE):
    """Bytes and inodes in use on the file system holding `path` ({"disk", "files"}; a counter the
    file system does not keep is None), or None when it cannot be read."""
    try:
        info = os.statvfs(path)
    except OSError:
        return None
    return {
        "disk": (info.f_blocks - info.f_bfree) * info.f_frsize if info.f_blocks else None,
        "files": info.f_files - info.f_ffree if info.f_files else None,
    }


class Meter:
    """The file system's counters, read again and again, as how much each rose in all since the first
    reading: a fall is not taken off. Others freeing space (another room's rm, a journal releasing what
    was removed) while a command writes would otherwise hide its growth until the next look; now only
    a fall between the same two readings as a rise can hide it. Falls are added up apart ("fell"): while
    others free space as fast as a command writes, the counters barely move, and only a look can tell
    (Allowance.blind). A reading is {"disk", "files"} (None for a counter the file system does not keep)
    with "fell" ({"disk", "files"}), or None when the counters cannot be read."""

    def __init__(self):
        self.last = None
        self.rose = {"disk": 0, "files": 0}
        self.fell = {"disk": 0, "files": 0}

    def read(self):
        used = fs_used()
        if used is None:
            return None
        if self.last is not None:
            for kind, before in self.last.items():
                now = used.get(kind)
                if before is not None and now is not None:
                    if now > before:
                        self.rose[kind] += now - before
                    else:
                        self.fell[kind] += before - now
        self.last = used
        reading = {kind: (rose if used.get(kind) is not None else None) for kind, rose in self.rose.items()}
        reading["fell"] = dict(self.fell)
        return reading


METER = Meter()


def disk_usage(cap=DISK_SCAN_LIMIT):
    """Bytes allocated and entries under the workspace, measured at once."""
    look = TREE.look(cap=cap)
    while not look.step(1 << 30):
        pass
    return look.bytes, look.files


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


def signal_session(sid, sig):
    """Sends `sig` to the group, then to members of the session that changed group."""
    try:
        os.killpg(sid, sig)
    except OSError:
        pass
    for pid in session_members(sid):
        if pid != os.getpid():
            try:
                os.kill(pid, sig)
            except OSError:
                pass


def open_write_size(pid):
    """The size of the largest regular file `pid` has open for writing (0 when none)."""
    folder = "/proc/%d/fd" % pid
    try:
        fds = os.listdir(folder)
    except OSError:
        return 0
    largest = 0
    for fd in fds:
        try:
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as handle:
                flags = int(handle.read().split("flags:", 1)[1].split()[0], 8)
            if flags & os.O_ACCMODE == os.O_RDONLY:
                continue
            info = os.stat(folder + "/" + fd)
        except (OSError, IndexError, ValueError):
            continue
        if stat.S_ISREG(info.st_mode):
            largest = max(largest, info.st_size)
    return largest


def wall_session(sid, room):
    """Sets the soft file-size limit of each process in session `sid` so that it can grow a file by `room`
    bytes beyond the largest it has open for writing, and a new file to `room`; never past the hard limit
    set before the command. Its children inherit it. A file that grows while this runs only gets a
    higher limit (its size is read after the room was measured)."""
    if resource is None:
        return
    for pid in session_members(sid):
        if pid == os.getpid():
            continue
        try:
            soft, hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)
            limit = open_write_size(pid) + max(0, room)
            if hard != resource.RLIM_INFINITY:
                limit = min(limit, hard)
            if limit != soft:
                resource.prlimit(pid, resource.RLIMIT_FSIZE, (limit, hard))
        except (OSError, ValueError):
            continue


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


class Allowance:
    """A command's share of the workspace quota: the limits, and how much it may leave there."""

    def __init__(self, quota, started):
        self.limits = {"disk": int(quota.get("bytes") or 0), "files": int(quota.get("files") or 0)}
        used = {"disk": int(quota.get("usedBytes") or 0), "files": int(quota.get("usedFiles") or 0)}
        # Over a limit already: it may not grow (but may shrink, and the allowance shrinks with it).
        self.allowed = {kind: max(limit, used[kind]) for kind, limit in self.limits.items()}
        self.due = started + WATCH_INTERVAL
        # The workspace as last known (`base`), and the file system's counters then (`gauge`, a Meter reading).
        self.base = used
        self.gauge = METER.read()
        # What the commands' file-size limits let a file grow by (see wall_session), without the margin:
        # at first what the bridge's cap left; None without a disk limit.
        self.wall = self.allowed["disk"] - used["disk"] if self.limits["disk"] else None
        self.margin = self.limits["disk"] // WALL_MARGIN
        self.step = self.limits["disk"] // WALL_STEP

    def room(self, gauge):
        """{kind: what the workspace may still grow by, if the file system's growth since `base` were all
        its own} for the limits the counters can tell about."""
        rooms = {}
        if self.gauge is None or gauge is None:
            return rooms
        for kind, limit in self.limits.items():
            before, now = self.gauge.get(kind), gauge.get(kind)
            if limit and before is not None and now is not None:
                rooms[kind] = self.allowed[kind] - self.base[kind] - (now - before)
        return rooms

    def suspect(self, gauge):
        """Whether the file system grew enough since `base` for the workspace to be past a limit."""
        return any(room < 0 for room in self.room(gauge).values())

    def tighten(self, gauge):
        """Whether the file system grew by a step into the room the file-size wall leaves: time to measure
        and lower it."""
        if self.wall is None or self.wall <= 0:
            return False
        room = self.room(gauge).get("disk")
        return room is not None and room < self.wall - self.step

    def blind(self, gauge):
        """Whether, since the workspace was last measured, others freed a twentieth of a limit on the file
        system (its counters may hide that much of the command's growth): time to look. Not for a limit
        the workspace was already past (nothing can be written then, and a file system allocating its
        own blocks after earlier writes must not get the command stopped)."""
        if self.gauge is None or gauge is None:
            return False
        for kind, limit in self.limits.items():
            fell = gauge["fell"][kind] - self.gauge["fell"][kind]
            if limit and self.allowed[kind] == limit and fell >= max(1, limit // WALL_STEP):
                return True
        return False

    def wall_room(self, scan):
        """The room the file-size wall should leave after complete measurement `scan`, or None to leave it
        as it is (within a step above). A measurement counts each file as it found it, never larger than
        it is when the wall is set, so the wall it gives is never lower than what is left (unless the
        command removed or renamed files while it measured)."""
        if self.wall is None or scan.stopped_early:
            return None
        room = max(0, self.allowed["disk"] - scan.bytes)
        return room if room < self.wall or room > self.wall + self.step else None

    def near(self, gauge, last):
        """Whether, growing as fast as since the `last` reading, the file system could reach that point
        within two readings."""
        if last is None:
            return False
        for kind, room in self.room(gauge).items():
            step = (gauge.get(kind) or 0) - (last.get(kind) or 0)
            if step > 0 and room < 2 * step:
                return True
        return False

    def stop_above(self):
        return {kind: self.allowed[kind] for kind, limit in self.limits.items() if limit}

    def judge(self, scan):
        """The limit the workspace is now past ("disk" or "files"), or None; a complete measurement
        lowers the allowance (sandbox/workspace-usage.ts keeps the same rule)."""
        used = {"disk": scan.bytes, "files": scan.files}
        for kind, limit in self.limits.items():
            if limit and used[kind] > self.allowed[kind]:
                return kind
        if not scan.stopped_early:
            for kind, limit in self.limits.items():
                self.allowed[kind] = max(limit, min(self.allowed[kind], used[kind]))
        return None

    def rebase(self, scan):
        """After a complete measurement: the workspace as it counted, and the file system's counters as
        it started. Without it, others freeing space while a command runs (or a journal releasing what
        the last one removed) would hide its growth. A look taken while commands run may count what they
        wrote after its counters were read: counted twice, that only makes the next suspicion early."""
        if not scan.stopped_early and scan.gauge is not None:
            self.base = {"disk": scan.bytes, "files": scan.files}
            self.gauge = scan.gauge


def scan_cap(quota):
    """Enough entries to tell that a file limit is passed."""
    return max(DISK_SCAN_LIMIT, int((quota or {}).get("files") or 0) + 1)


class Job:
    def __init__(self, ident, command, fsize=None, disk=False, quota=None):
        self.ident = ident
        self.disk = disk
        self.started = time.monotonic()
        self.allowance = Allowance(quota, self.started) if quota else None
        self.cap = scan_cap(quota)
        self.quota_stop = None
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
        # Below the runner's priority, so that its watch gets its turn (raising niceness needs no privilege).
        try:
            os.setpriority(os.PRIO_PROCESS, self.pid, COMMAND_NICE)
        except OSError:
            pass
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

    def pause(self, paused):
        if self.status is None:
            signal_session(self.pid, signal.SIGSTOP if paused else signal.SIGCONT)

    def wall(self, scan):
        """Lowers or raises the file-size wall of this command's processes after measurement `scan`."""
        room = self.allowance.wall_room(scan)
        if room is not None and self.status is None:
            wall_session(self.pid, room + self.allowance.margin)
            self.allowance.wall = room

    def stop_for(self, kind):
        """The workspace went past a limit while this ran."""
        self.quota_stop = kind
        self.kill()

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
            end["disk"], end["files"] = disk_usage(self.cap)
        if self.quota_stop:
            end["quota"] = self.quota_stop
        send_json("E", self.ident, end)


def stop_above_of(watched):
    """Where a look for these commands may stop: past the lowest of their allowances."""
    stop_above = {}
    for job in watched:
        for kind, allowed in job.allowance.stop_above().items():
            stop_above[kind] = min(allowed, stop_above.get(kind, allowed))
    return stop_above


def verify(watched, pause=True):
    """The file system grew enough for the workspace to be past a limit: pauses these commands,
    measures the workspace to the end, and stops those past their allowance (the others go on, their
    file-size walls set from the measurement). Without `pause` (to lower the walls, see tighten), what
    they write while it measures may go uncounted, which only leaves their walls that much higher.
    Returns the CPU time the measurement took."""
    if pause:
        for job in watched:
            job.pause(True)
    try:
        look = TREE.look(cap=max(job.cap for job in watched), stop_above=stop_above_of(watched), exact=True)
        while not look.step(1 << 30):
            pass
        for job in watched:
            kind = job.allowance.judge(look)
            if kind:
                job.stop_for(kind)
            else:
                job.allowance.rebase(look)
                job.wall(look)
        return look.cost
    finally:
        if pause:
            for job in watched:
                if job.quota_stop is None:
                    job.pause(False)


class PauseBudget:
    """How long commands may be kept paused for measuring: a flood of theirs needs a measurement or
    two at once, but others writing on a shared file system could ask for one after another. So the
    time paused is drawn from a budget that refills at a quarter of the time passing (at most a fifth
    of the time paused in the long run) and holds at most PAUSE_BURST seconds."""

    def __init__(self):
        self.left = PAUSE_BURST
        self.at = time.monotonic()

    def available(self):
        now = time.monotonic()
        self.left = min(PAUSE_BURST, self.left + (now - self.at) / WATCH_COST_FACTOR)
        self.at = now
        return self.left > 0

    def spend(self, seconds):
        self.left -= seconds


def main():
    os.set_blocking(0, False)
    send_json("H", 0, {"protocol": PROTOCOL, "pid": os.getpid(), "oomKills": oom_kills()})
    jobs = {}
    inbox = bytearray()
    stdin_open = True
    scan = None
    next_scan = 0.0
    next_gauge = 0.0
    next_wall = 0.0
    pauses = PauseBudget()
    last_gauge = None
    while stdin_open or jobs:
        readers = [0] if stdin_open else []
        timeout = None
        now = time.monotonic()
        watched = [job for job in jobs.values() if job.allowance is not None and job.status is None]
        if scan is None and watched:
            due = max(next_scan, min(job.allowance.due for job in watched))
            if now >= due:
                scan = TREE.look(cap=max(job.cap for job in watched), stop_above=stop_above_of(watched))
            else:
                timeout = due - now
        if watched:
            wait = max(0.0, next_gauge - now)
            timeout = wait if timeout is None else min(timeout, wait)
        if scan is not None:
            timeout = 0
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

        watched = [job for job in jobs.values() if job.allowance is not None and job.status is None]
        if watched and time.monotonic() >= next_gauge:
            gauge = METER.read()
            if any(job.allowance.suspect(gauge) for job in watched) and pauses.available():
                if scan is not None:
                    scan.close()
                    scan = None
                begun = time.monotonic()
                verify(watched)
                pauses.spend(time.monotonic() - begun)
                gauge = None
            elif time.monotonic() >= next_wall and any(
                job.allowance.tighten(gauge) or job.allowance.blind(gauge) for job in watched
            ):
                if scan is not None:
                    scan.close()
                    scan = None
                # Not paused: a pause cuts short a read under way (dd from /dev/zero writes less than asked).
                cost = verify(watched, pause=False)
                next_wall = time.monotonic() + WATCH_COST_FACTOR * cost
                gauge = None
            fast = gauge is not None and any(job.allowance.near(gauge, last_gauge) for job in watched)
            last_gauge = gauge
            next_gauge = time.monotonic() + (GAUGE_FAST_INTERVAL if fast else GAUGE_INTERVAL)

        if scan is not None:
            watched = [job for job in jobs.values() if job.allowance is not None and job.status is None]
            if not watched:
                scan.close()
                scan = None
            elif scan.step(SCAN_SLICE):
                for job in watched:
                    # A measurement begun before the command started says nothing about it.
                    if job.started <= scan.started:
                        kind = job.allowance.judge(scan)
                        if kind:
                            job.stop_for(kind)
                        else:
                            job.allowance.rebase(scan)
                            job.wall(scan)
                next_scan = time.monotonic() + max(WATCH_INTERVAL, WATCH_COST_FACTOR * scan.cost)
                scan = None
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
        job = Job(ident, request["command"], request.get("fsize"), bool(request.get("disk")), request.get("quota"))
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
