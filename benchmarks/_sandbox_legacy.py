# BASELINE, not used by the project: verifiers/sandbox.py as it was before the kernel isolation (issue 17;
# commit fa7df94), kept unchanged so benchmarks/bench_sandbox.py can measure the new sandbox against it in
# the same run. It is escapable (see docs/sandbox.md); never import it outside benchmarks.
"""Run model-written (untrusted) Python in a separate, limited, throwaway process.

    run_python(code, limits=SandboxLimits(), inputs=None) -> SandboxResult      # never raises

The code runs with `exec` in a fresh interpreter (`python -I -S -B -u -c <runner>`): `inputs` are its
variables, and `value` is the repr of a variable named `result` if the code sets one. The runner
reports its result (hex-encoded JSON lines) on a dedicated pipe, not on stdout, so nothing the code
prints can break the parsing; stdout and stderr are captured and truncated to `output_kb` each.
`preexec_fn` only calls setrlimit (CPython warns that preexec_fn is not thread-safe in general;
this one takes no locks and imports nothing).

What holds, and who holds it
----------------------------
Enforced by the kernel (holds against any code, native code included):
  - RLIMIT_CPU (soft `cpu_s`: SIGXCPU, hard `cpu_s + 1`: SIGKILL), RLIMIT_AS (`memory_mb`),
    RLIMIT_FSIZE (`file_size_mb`: a bigger write fails with EFBIG), RLIMIT_CORE = 0 and
    RLIMIT_NOFILE = 256, all set in `preexec_fn` before the interpreter starts;
  - RLIMIT_NPROC, set to the number of tasks the user already has + 1 + `max_processes`. The
    kernel counts *all* processes and threads of the real uid, so this is approximate (other
    processes of the user come and go), and it does not apply at all to root (uid 0 of the initial
    user namespace, or any process with CAP_SYS_RESOURCE / CAP_SYS_ADMIN). Under root, the runner's
    guards below are what stops a fork;
  - the wall-clock limit, kept by the parent: the child is a session and process-group leader
    (`start_new_session=True`), and the parent SIGKILLs the whole group on timeout and again after
    every run, so nothing that stays in the group outlives the call;
  - a throwaway working directory (also HOME and TMPDIR), removed afterwards, and an environment
    built from constants only: nothing of the parent's environment (API keys, tokens) is passed.
    Python runs isolated: -I (no PYTHON* variables, no user site, no script dir or cwd on
    sys.path) and -S (no site.py, so no .pth file of the parent's environment is executed; the
    parent's site-packages directories are put on sys.path, so sympy, numpy, pint import).

Enforced inside the child by the runner, before the code runs (two layers):
  1. the obvious entry points are replaced by functions that raise PermissionError: os.fork,
     os.system, os.popen, os.exec*, os.spawn*, os.posix_spawn*, os.kill, os.mkfifo,
     subprocess.Popen, _posixsubprocess.fork_exec (which raises no audit event), pty.fork,
     socket.socket, socket.create_connection, socket.getaddrinfo, ...;
  2. an audit hook (`sys.addaudithook`; it cannot be removed once added) that holds even where
     layer 1 is bypassed (e.g. a fresh copy of the posix module). It refuses, by audit event:
     network (socket.__new__, socket.connect, socket.bind, socket.getaddrinfo, urllib.Request, ...);
     processes (os.fork, os.exec, os.posix_spawn, os.system, subprocess.Popen, os.kill, ...);
     writes, creations, deletions, renames and links outside the working directory ("open" in a
     write mode, os.remove, os.rename, os.mkdir, os.rmdir, os.symlink, os.link, os.chmod,
     shutil.rmtree, shutil.copyfile, ...; paths are resolved like realpath, and relative paths may
     not climb out with ".."); os.open of directories outside (they would anchor dir_fd= calls);
     reading other processes' /proc entries (e.g. the parent's /proc/<pid>/environ); raising
     rlimits (resource.setrlimit: root could raise hard limits); foreign calls through ctypes;
     sys.settrace / sys.setprofile / gc.get_objects / gc.get_referrers; and (re)loading a few
     native modules that would get around the hook (_posixsubprocess, _xxsubinterpreters,
     _testcapi, _cffi_backend, ...). It also caps how many files and directories the code creates
     (`max_files`), so RLIMIT_FSIZE times `max_files` bounds what it can leave on disk.
     The hook is one flat function whose state is bound as default arguments (immutable values
     and C functions) and it never calls a user-defined method, so code that catches a refusal and
     walks its traceback into the hook's frame finds nothing whose change would switch a check off.
A refused action raises PermissionError with "is refused in the sandbox (<what>)" in its message;
the result then says "refused" and names what was refused. Refusals the code catches and swallows
are still reported in the reason ("refused along the way: ...").

Limits of the in-process guards: an audit hook is not a security boundary. It stops what
Python-level code does, which is what model-written code is; native code (a C extension, crafted
bytecode, memory corruption) can get past it and past the replaced functions. It does not restrict
reading files (the child can read whatever the parent's uid can, apart from other processes'
/proc entries). A process that escaped the guards and started its own session would also escape
the process-group kill. What holds regardless are the rlimits, the wall-clock kill, the empty
environment and the throwaway directory; for more, run the parent as an unprivileged user (then
RLIMIT_NPROC and file permissions are enforced by the kernel too) or add a container / seccomp.

Statuses: "ok"; "error" (an exception: its type and message, or a non-zero exit); "timeout" (the
wall clock, or "cpu time limit" on SIGXCPU / the hard CPU SIGKILL); "memory" (MemoryError, or a
native allocation failure under RLIMIT_AS); "refused" (a guard, or the file-size limit); "killed"
(any other signal).
"""
from __future__ import annotations

import json
import keyword
import os
import resource
import selectors
import signal
import site
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

STATUSES = ("ok", "error", "timeout", "memory", "killed", "refused")
PAYLOAD = ".r3sandbox-payload.json"
_DRAIN_S = 0.5  # how long to keep reading pipes after the child (group) is gone


@dataclass(frozen=True)
class SandboxLimits:
    wall_s: float = 5.0  # wall clock, kept by the parent
    cpu_s: int = 3  # RLIMIT_CPU (whole seconds; the hard limit is one more)
    memory_mb: int = 512  # RLIMIT_AS
    file_size_mb: int = 1  # RLIMIT_FSIZE
    max_processes: int = 0  # processes beyond the child itself (RLIMIT_NPROC + the runner's guards)
    output_kb: int = 64  # stdout and stderr are each cut to this
    max_files: int = 100  # files and directories the code may create in its working directory


@dataclass(frozen=True)
class SandboxResult:
    ok: bool
    status: str  # ok | error | timeout | memory | killed | refused
    stdout: str
    stderr: str
    returncode: int | None
    value: str | None  # repr of `result` when the code sets it
    seconds: float
    reason: str  # human-readable, never empty


# The runner: executed by the child as `python -I -S -B -u -c _RUNNER <result fd>` in the working
# directory. Everything lives in functions so that the guards' state is only reachable from the
# audit hook's closure (not from __main__, not from a frame the user code can walk up to).
_RUNNER = r'''
import sys


def _install_guards(wd, rfd, max_files):
    """Layer 1: replace the entry points. Layer 2: the audit hook. Nothing is returned.

    The hook is one flat function without closures or globals: everything it uses is bound as a
    default argument (immutable objects and C functions, apart from two counters). So a frame of it
    that user code reaches through a refusal's traceback exposes nothing whose change would switch
    a check off, and no user-defined method (__fspath__, __hash__, __eq__) is ever called from it.
    """
    import os, pathlib, posix, socket, subprocess, _posixsubprocess, _socket
    try:
        import pty
    except ImportError:
        pty = None
    write = posix.write

    def note(msg):
        try:
            write(rfd, b"R " + msg.encode("utf-8", "backslashreplace").hex().encode() + b"\n")
        except OSError:
            pass

    # -- layer 1: replaced entry points (convenient, clear messages; not relied upon) ---------------
    def refuser(kind, what):
        msg = f"{kind} is refused in the sandbox ({what})"

        def refused(*args, **kwargs):
            note(msg)
            raise PermissionError(msg)
        refused.__name__ = what.rsplit(".", 1)[-1]
        return refused

    procs, net = "starting or signalling processes", "network access"
    for mod in (os, posix):
        for name in ("fork", "forkpty", "vfork", "system", "popen", "posix_spawn", "posix_spawnp", "kill", "killpg",
                     "execv", "execve", "execl", "execle", "execlp", "execlpe", "execvp", "execvpe", "spawnv", "spawnve",
                     "spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnvp", "spawnvpe", "mkfifo", "mknod"):
            if hasattr(mod, name):
                kind = "creating special files" if name in ("mkfifo", "mknod") else procs
                setattr(mod, name, refuser(kind, f"os.{name}"))
    _posixsubprocess.fork_exec = subprocess._fork_exec = refuser(procs, "_posixsubprocess.fork_exec")
    popen_refused = refuser(procs, "subprocess.Popen")

    class Popen(subprocess.Popen):
        def __init__(self, *args, **kwargs):
            self._child_created = False
            popen_refused()
    subprocess.Popen = Popen
    if pty is not None:
        pty.fork, pty.spawn = refuser(procs, "pty.fork"), refuser(procs, "pty.spawn")
    socket_refused = refuser(net, "socket.socket")

    class NoSocket(socket.socket):
        def __new__(cls, *args, **kwargs):
            socket_refused()
    socket.socket = socket.SocketType = _socket.socket = _socket.SocketType = NoSocket
    for name in ("create_connection", "create_server", "socketpair", "fromfd", "getaddrinfo", "gethostbyname",
                 "gethostbyname_ex", "gethostbyaddr", "getnameinfo"):
        for mod in (socket, _socket):
            if hasattr(mod, name):
                setattr(mod, name, refuser(net, f"socket.{name}"))

    # -- layer 2: the audit hook ----------------------------------------------------------------------
    try:
        pp_str = pathlib.PurePath.__dict__["_str"].__get__  # the str a Path was converted to (a slot)
    except (KeyError, AttributeError):
        pp_str = os.fspath
    W = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    kinds = {}
    for e in ("socket.__new__", "socket.connect", "socket.bind", "socket.getaddrinfo", "socket.gethostbyname",
              "socket.gethostbyaddr", "socket.getnameinfo", "socket.sendto", "socket.sendmsg", "socket.sethostname",
              "urllib.Request", "http.client.connect", "ftplib.connect", "smtplib.connect", "poplib.connect",
              "imaplib.open", "nntplib.connect", "telnetlib.Telnet.open"):
        kinds[e] = net
    for e in ("os.fork", "os.forkpty", "os.system", "os.exec", "os.spawn", "os.posix_spawn", "subprocess.Popen",
              "pty.spawn", "os.kill", "os.killpg", "signal.pthread_kill", "os.startfile"):
        kinds[e] = procs
    for e in ("ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.call_function", "ctypes.cdata"):
        kinds[e] = "calling native code"
    for e in ("resource.setrlimit", "resource.prlimit"):
        kinds[e] = "changing resource limits"
    for e in ("gc.get_objects", "gc.get_referrers", "sys._current_frames", "sys.settrace", "sys.setprofile"):
        kinds[e] = "tracing or walking the interpreter"
    # file events: (index of the path, index of its dir_fd or None, creates something)
    one = {"os.remove": (0, 1, 0), "os.rmdir": (0, 1, 0), "os.mkdir": (0, 2, 1), "os.chmod": (0, 2, 0),
           "os.chown": (0, 3, 0), "os.utime": (0, 3, 0), "os.truncate": (0, None, 0), "os.setxattr": (0, None, 0),
           "os.removexattr": (0, None, 0), "os.chflags": (0, None, 0), "os.lchflags": (0, None, 0),
           "shutil.rmtree": (0, 1, 0), "shutil.chown": (0, None, 0), "shutil.copyfile": (1, None, 1),
           "shutil.copymode": (1, None, 0), "shutil.copystat": (1, None, 0), "shutil.copytree": (1, None, 1),
           "shutil.unpack_archive": (1, None, 1), "shutil.make_archive": (0, None, 1)}
    two = {"os.rename": (0, 1, 2, 3), "os.link": (0, 1, 2, 3), "shutil.move": (0, 1, None, None)}
    native = frozenset({"_posixsubprocess", "_xxsubinterpreters", "_xxinterpchannels", "_testcapi",
                        "_testinternalcapi", "_testmultiphase", "_testbuffer", "_testimportmultiple", "_ctypes_test",
                        "_cffi_backend"})
    watch = frozenset(kinds) | frozenset(one) | frozenset(two) | {"open", "import", "os.symlink", "ctypes.dlopen"}

    def hook(event, args, _watch=watch, _kinds=tuple(kinds.items()), _one=tuple(one.items()),
             _two=tuple(two.items()), _native=native, _wd=wd, _wdp=wd + "/", _mypid=str(posix.getpid()),
             _max=max_files, _created=set(), _sent=[0], _rfd=rfd, _write=write, _lstat=posix.lstat,
             _stat=posix.stat, _readlink=posix.readlink, _getcwd=posix.getcwd, _pp_str=pp_str,
             _pathtypes=frozenset({pathlib.PurePath, pathlib.PurePosixPath, pathlib.Path, pathlib.PosixPath}),
             _enc=sys.getfilesystemencoding(), _type=type, _issubclass=issubclass, _len=len, _str=str,
             _bytes=bytes, _int=int, _tuple=tuple, _dict=dict, _str_str=str.__str__, _bjoin=b"".join,
             _W=W, _O_CREAT=os.O_CREAT, _O_DIR=getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_PATH", 0),
             _Refused=PermissionError, _MemoryError=MemoryError, _OSError=OSError, _ValueError=ValueError,
             _BaseException=BaseException, _repr=repr):
        if _type(event) is not _str or event not in _watch:
            return
        refusal = None
        try:
            n = _len(args)
            a0 = args[0] if n > 0 else None
            checks = []  # (path, dir_fd, mode): mode "w" write, "c" create, "r" read, "o" os.open read
            if event == "open":
                mode, flags = (args[1] if n > 1 else None), (args[2] if n > 2 else 0)
                if _type(mode) is not _str:
                    mode = None
                if _type(flags) is not _int:
                    flags = 0
                m = mode or ""
                if "w" in m or "a" in m or "x" in m or "+" in m or flags & _W:
                    creates = "w" in m or "a" in m or "x" in m or flags & _O_CREAT
                    checks.append((a0, None, "c" if creates else "w"))
                else:
                    checks.append((a0, None, "o" if mode is None else "r"))
                    if mode is None and flags & _O_DIR:
                        checks.append((a0, None, "d"))
            elif event == "import":
                name = a0 if _type(a0) is _str else (_str_str(a0) if _issubclass(_type(a0), _str) else "")
                if name in _native:
                    refusal = ("loading this native module", "import " + name)
            elif event == "ctypes.dlopen":
                if a0 is not None:
                    refusal = ("loading native libraries", "ctypes.dlopen")
            elif event == "os.symlink":  # (src, dst, dir_fd): the target must stay inside as well
                checks.append((args[1] if n > 1 else None, args[2] if n > 2 else None, "c"))
                checks.append((a0, None, "t"))
            else:
                for key, kind in _kinds:
                    if key == event:
                        refusal = (kind, event)
                if event.startswith(("os.exec", "os.spawn", "os.posix_spawn")):
                    refusal = ("starting or signalling processes", event)
                for key, (i, d, c) in _one:
                    if key == event:
                        checks.append((args[i] if n > i else None, args[d] if d is not None and n > d else None,
                                       "c" if c else "w"))
                for key, (i, j, di, dj) in _two:
                    if key == event:
                        checks.append((args[i] if n > i else None, args[di] if di is not None and n > di else None, "w"))
                        checks.append((args[j] if n > j else None, args[dj] if dj is not None and n > dj else None, "c"))
            for obj, dfd, mode in checks:
                if refusal is not None:
                    break
                t = _type(obj)
                if t is _str:
                    p = obj
                elif t is _bytes:
                    p = obj.decode(_enc, "surrogateescape")
                elif _issubclass(t, _str):
                    p = _str_str(obj)
                elif _issubclass(t, _bytes):
                    p = _bjoin((obj,)).decode(_enc, "surrogateescape")
                elif t in _pathtypes:
                    p = _pp_str(obj)
                    if _type(p) is not _str:
                        refusal = ("using this path object", event)
                        break
                elif obj is None or _issubclass(t, _int):
                    continue  # no path, or a file descriptor (opened under these rules)
                else:
                    refusal = ("using a path of an unknown type", event)
                    break
                if mode != "t" and p in ("/dev/null", "/dev/stdout", "/dev/stderr"):
                    continue
                # resolve like os.path.realpath, from the captured primitives only
                if p.startswith("/"):
                    full = p
                elif mode == "t":  # a symlink's target: relative to the link, and no ".." at all
                    full = _wdp + p
                else:
                    base = None
                    if _type(dfd) is _int and dfd >= 0:
                        try:
                            base = _readlink("/proc/self/fd/" + _str(dfd))
                        except (_OSError, _ValueError):
                            base = "/"
                    full = (base if base is not None else _getcwd()) + "/" + p
                done, todo, links = [], full.split("/")[::-1], 0
                while todo:
                    part = todo.pop()
                    if part == "" or part == ".":
                        continue
                    if part == "..":
                        if done:
                            done.pop()
                        continue
                    cand = "/" + "/".join(done) + ("/" if done else "") + part
                    try:
                        st_mode = _lstat(cand).st_mode
                    except (_OSError, _ValueError):
                        done.append(part)
                        continue
                    if st_mode & 0o170000 == 0o120000:
                        links += 1
                        if links > 40:
                            done, todo = ["/"], []  # a loop: treat as outside
                            break
                        target = _readlink(cand)
                        if target.startswith("/"):
                            done = []
                        todo.extend(target.split("/")[::-1])
                    else:
                        done.append(part)
                r = "/" + "/".join(done)
                inside = r == _wd or r.startswith(_wdp)
                if mode in ("w", "c", "t"):
                    climbs = False
                    if not p.startswith("/") or mode == "t":
                        depth = 0
                        for part in p.split("/"):
                            if part == "..":
                                depth -= 1
                                if depth < 0 or mode == "t":
                                    climbs = True
                            elif part != "" and part != ".":
                                depth += 1
                    if not inside or climbs:
                        what = "linking outside the working directory" if mode == "t" else \
                            "writing outside the working directory"
                        refusal = (what, event + " " + _repr(p))
                    elif mode == "c" and r not in _created:
                        try:
                            _lstat(r)
                        except (_OSError, _ValueError):
                            if _len(_created) >= _max:
                                refusal = ("creating more files", event + " " + _repr(p) + ": the limit is "
                                           + _str(_max) + " files")
                            else:
                                _created.add(r)
                else:
                    parts = r.split("/")
                    if _len(parts) > 2 and parts[1] == "proc" and parts[2].isdigit() and parts[2] != _mypid:
                        refusal = ("reading other processes", event + " " + _repr(p))
                    elif (mode == "o" or mode == "d") and not inside:  # no directory fds outside (dir_fd= anchors)
                        try:
                            is_dir = _stat(r).st_mode & 0o170000 == 0o040000
                        except (_OSError, _ValueError):
                            is_dir = False
                        if is_dir or mode == "d":
                            refusal = ("opening directories outside the working directory", "os.open " + _repr(p))
        except _MemoryError:
            raise
        except _BaseException:
            refusal = ("an action the guards could not check", event)
        if refusal is not None:
            msg = refusal[0] + " is refused in the sandbox (" + refusal[1] + ")"
            if _sent[0] < 5:
                _sent[0] += 1
                try:
                    _write(_rfd, b"R " + msg.encode("utf-8", "backslashreplace").hex().encode() + b"\n")
                except _OSError:
                    pass
            raise _Refused(msg)

    sys.addaudithook(hook)


def _main():
    import builtins, json, linecache, os, posix, traceback, types
    rfd = int(sys.argv[1])
    write = posix.write
    with open(PAYLOAD_NAME, "rb") as f:
        payload = json.loads(f.read())
    os.unlink(PAYLOAD_NAME)
    sys.path[:0] = payload["paths"]
    lim = payload["limits"]
    cap = max(1024, lim["output_kb"] * 1024)
    encoder = json.JSONEncoder()
    marker = "is refused in the sandbox"

    def send(out):
        try:
            write(rfd, b"F " + encoder.encode(out).encode().hex().encode() + b"\n")
        except Exception:
            pass

    code = payload["code"]
    module = types.ModuleType("__main__")
    module.__builtins__ = builtins
    module.__dict__.update(payload["inputs"])
    linecache.cache["<sandbox>"] = (len(code), None, code.splitlines(True), "<sandbox>")
    try:
        compiled = compile(code, "<sandbox>", "exec")
    except (SyntaxError, ValueError) as e:  # ValueError: a NUL byte in the source
        traceback.print_exception(e, limit=0)
        where = f" (line {e.lineno})" if getattr(e, "lineno", None) else ""
        send({"final": "error", "reason": f"{type(e).__name__}: {getattr(e, 'msg', e)}{where}", "value": None})
        return
    _install_guards(os.path.realpath(os.getcwd()), rfd, int(lim["max_files"]))
    sys.modules["__main__"] = module
    memory = f"memory limit of {lim['memory_mb']} MB reached (MemoryError)"
    out = None
    try:
        exec(compiled, module.__dict__)
        out = {"final": "ok", "reason": "ran to completion", "value": None}
    except MemoryError:
        out = "memory"
    except SystemExit as e:
        if e.code is None or e.code == 0:
            out = {"final": "ok", "reason": "ran to completion (sys.exit(0))", "value": None}
        else:
            out = {"final": "error", "reason": f"SystemExit: {e.code!r}"[:500], "value": None}
    except BaseException as e:
        tb = e.__traceback__.tb_next if e.__traceback__ is not None else None  # drop the runner's frame
        traceback.print_exception(type(e), e, tb)
        chain, x = [], e
        while x is not None and len(chain) < 20 and not any(x is y for y in chain):
            chain.append(x)
            x = x.__cause__ or x.__context__
        refused = next((x for x in chain if isinstance(x, PermissionError) and marker in str(x)), None)
        efbig = next((x for x in chain if isinstance(x, OSError) and x.errno == 27), None)
        line = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == "<sandbox>":
                line = tb.tb_lineno
            tb = tb.tb_next
        where = f" (line {line})" if line else ""
        if refused is not None:
            out = {"final": "refused", "reason": str(refused)[:500], "value": None}
        elif efbig is not None:
            out = {"final": "refused", "reason": f"file size limit of {lim['file_size_mb']} MB reached{where}",
                   "value": None}
        else:
            last = traceback.format_exception_only(type(e), e)[-1].strip()
            out = {"final": "error", "reason": (last[:400] + where), "value": None}
    if out == "memory":
        module.__dict__.clear()
        sys.stderr.write("MemoryError\n")
        out = {"final": "memory", "reason": memory, "value": None}
    elif out["final"] == "ok" and "result" in module.__dict__:
        try:
            value = repr(module.__dict__["result"])
            out["value"] = value if len(value) <= cap else value[:cap] + f"... [{len(value) - cap} characters cut]"
        except MemoryError:
            out = {"final": "memory", "reason": memory + " in repr(result)", "value": None}
        except BaseException as e:
            out = {"final": "error", "reason": f"repr(result) failed: {type(e).__name__}: {e}"[:500], "value": None}
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    send(out)


try:
    _main()
finally:
    import os as _os
    _os._exit(0)  # no atexit handlers, no waiting for threads the code left behind
'''.replace("PAYLOAD_NAME", repr(PAYLOAD))


def _result(status, reason, t0, stdout="", stderr="", returncode=None, value=None):
    return SandboxResult(status == "ok", status, stdout, stderr, returncode, value,
                         round(time.monotonic() - t0, 4), reason or status)


def _site_paths():
    paths = []
    try:
        paths += site.getsitepackages()
    except AttributeError:  # very old virtualenv
        pass
    return [p for p in dict.fromkeys(paths) if os.path.isdir(p)]


def _user_tasks(uid):
    """Processes and threads of real uid `uid` (what RLIMIT_NPROC counts), or None without /proc."""
    n = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    for e in entries:
        if not e.isdigit():
            continue
        try:
            with open(f"/proc/{e}/status", "rb") as f:
                real_uid = threads = None
                for line in f:
                    if line.startswith(b"Uid:"):
                        real_uid = int(line.split()[1])
                    elif line.startswith(b"Threads:"):
                        threads = int(line.split()[1])
            if real_uid == uid:
                n += threads or 1
        except (OSError, ValueError, IndexError):
            continue
    return n


def _rlimits(lim: SandboxLimits):
    """[(resource, soft, hard)], never above the limits the parent already has."""
    mib = 1024 * 1024
    tasks = _user_tasks(os.getuid())
    want = [(resource.RLIMIT_CPU, lim.cpu_s, lim.cpu_s + 1),
            (resource.RLIMIT_AS, lim.memory_mb * mib, lim.memory_mb * mib),
            (resource.RLIMIT_FSIZE, lim.file_size_mb * mib, lim.file_size_mb * mib),
            (resource.RLIMIT_CORE, 0, 0),
            (resource.RLIMIT_NOFILE, 256, 256),
            (resource.RLIMIT_NPROC, (tasks or 0) + 1 + lim.max_processes, (tasks or 0) + 1 + lim.max_processes)]
    out = []
    for res, soft, hard in want:
        _, cur_hard = resource.getrlimit(res)
        if cur_hard != resource.RLIM_INFINITY:
            hard = min(hard, cur_hard)
        out.append((res, min(soft, hard), hard))
    return out


def _preexec(rlimits):
    setrlimit = resource.setrlimit

    def apply():  # runs in the forked child before exec: keep it to plain calls
        for res, soft, hard in rlimits:
            setrlimit(res, (soft, hard))
    return apply


def _check(code, limits, inputs):
    if not isinstance(code, str):
        return f"code must be a str, not {type(code).__name__}"
    if not isinstance(limits, SandboxLimits):
        return "limits must be a SandboxLimits"
    for name in ("wall_s", "cpu_s", "memory_mb", "file_size_mb", "output_kb"):
        v = getattr(limits, name)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not v > 0:
            return f"limits.{name} must be a positive number, not {v!r}"
    for name in ("max_processes", "max_files"):
        v = getattr(limits, name)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            return f"limits.{name} must be a non-negative int, not {v!r}"
    if inputs is not None and not isinstance(inputs, dict):
        return "inputs must be a dict"
    for k in inputs or {}:
        if not isinstance(k, str) or not k.isidentifier() or keyword.iskeyword(k) or k.startswith("__"):
            return f"input name {k!r} is not a usable variable name"
    return None


class _Capped:
    """Keeps the first `cap` bytes of a stream and counts the rest."""

    def __init__(self, cap):
        self.cap, self.data, self.dropped = cap, bytearray(), 0

    def add(self, chunk):
        room = self.cap - len(self.data)
        if room > 0:
            self.data += chunk[:room]
        self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self):
        s = self.data.decode("utf-8", "replace")
        if self.dropped:
            s += f"\n[... {self.dropped} more bytes cut: the output limit is {self.cap // 1024} KB]"
        return s


def _exited(pid):
    """True once the child has exited (still unreaped: its pid and group id stay reserved)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _killpg(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _signame(sig):
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def run_python(code: str, limits: SandboxLimits = SandboxLimits(), inputs: dict | None = None) -> SandboxResult:
    """Run `code` in the sandbox; see the module docstring. Never raises (short of interpreter shutdown)."""
    t0 = time.monotonic()
    try:
        bad = _check(code, limits, inputs)
        if bad:
            return _result("error", bad, t0)
        try:
            payload = json.dumps({"code": code, "inputs": inputs or {}, "paths": _site_paths(),
                                  "limits": {"output_kb": limits.output_kb, "memory_mb": limits.memory_mb,
                                             "file_size_mb": limits.file_size_mb, "max_files": limits.max_files}},
                                 allow_nan=True)
        except (TypeError, ValueError) as e:
            return _result("error", f"inputs are not JSON-serialisable: {e}", t0)
        with tempfile.TemporaryDirectory(prefix="r3sandbox-", ignore_cleanup_errors=True) as wd:
            return _run(payload, limits, os.path.realpath(wd), t0)
    except Exception as e:  # a bug or an exhausted parent: still a result
        return _result("error", f"sandbox failure: {type(e).__name__}: {e}", t0)


def _run(payload, limits, wd, t0):
    with open(os.path.join(wd, PAYLOAD), "w", encoding="utf-8") as f:
        f.write(payload)
    if not sys.executable:
        return _result("error", "no Python executable to start (sys.executable is empty)", t0)
    env = {"PATH": "/usr/bin:/bin", "HOME": wd, "TMPDIR": wd, "LANG": "C.UTF-8",
           "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    rfd, wfd = os.pipe()
    try:
        try:
            proc = subprocess.Popen([sys.executable, "-I", "-S", "-B", "-u", "-c", _RUNNER, str(wfd)], cwd=wd, env=env,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    pass_fds=(wfd,), close_fds=True, start_new_session=True,
                                    preexec_fn=_preexec(_rlimits(limits)))
        except (OSError, subprocess.SubprocessError, ValueError) as e:
            return _result("error", f"could not start the sandboxed process: {type(e).__name__}: {e}", t0)
        finally:
            os.close(wfd)
        return _supervise(proc, rfd, limits, t0)
    finally:
        os.close(rfd)


def _parse_channel(data):
    """The runner's lines: b"R <hex utf-8>" for each refusal, b"F <hex json>" for the final result."""
    final, refusals = None, []
    for line in data.splitlines():
        kind, _, body = line.partition(b" ")
        try:
            text = bytes.fromhex(body.decode("ascii")).decode("utf-8", "replace")
        except ValueError:
            continue
        if kind == b"R":
            refusals.append(text)
        elif kind == b"F":
            try:
                msg = json.loads(text)
            except ValueError:
                continue
            if isinstance(msg, dict) and msg.get("final") in STATUSES:
                final = msg
    return final, refusals


def _supervise(proc, rfd, limits, t0):
    cap = int(limits.output_kb * 1024)
    out, err, res = _Capped(cap), _Capped(cap), _Capped(2 * cap + 65536)
    sel = selectors.DefaultSelector()
    for fd, sink in ((proc.stdout.fileno(), out), (proc.stderr.fileno(), err), (rfd, res)):
        sel.register(fd, selectors.EVENT_READ, sink)

    def pump(timeout):
        for key, _ in sel.select(timeout):
            try:
                chunk = os.read(key.fd, 65536)
            except OSError:
                chunk = b""
            if chunk:
                key.data.add(chunk)
            else:
                sel.unregister(key.fd)

    deadline = t0 + float(limits.wall_s)
    timed_out = False
    status = rusage = None
    try:
        exited_at = None
        while True:
            now = time.monotonic()
            if exited_at is None and _exited(proc.pid):
                exited_at = now
            if exited_at is not None and (not sel.get_map() or now - exited_at > _DRAIN_S):
                break  # exited; its pipes are read, or held by a straggler that is about to be killed
            if exited_at is None and now >= deadline:
                timed_out = True
                break
            if sel.get_map():
                pump(min(0.05, max(0.0, deadline - now)))
            else:
                time.sleep(0.01)
    finally:
        _killpg(proc.pid)  # the whole group, every time; the unreaped leader keeps the group id reserved
        try:
            _, status, rusage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
        except ChildProcessError:
            proc.wait()
        end = time.monotonic() + _DRAIN_S
        while sel.get_map() and time.monotonic() < end:
            pump(0.05)
        sel.close()
        proc.stdout.close()
        proc.stderr.close()
    rc = proc.returncode
    stdout, stderr = out.text(), err.text()

    final, refusals = _parse_channel(bytes(res.data))

    def done(status, reason, value=None):
        if status != "refused" and refusals:
            reason += "; refused along the way: " + "; ".join(dict.fromkeys(refusals))
        return _result(status, reason, t0, stdout, stderr, rc, value)

    cpu = (rusage.ru_utime + rusage.ru_stime) if rusage is not None else 0.0
    if timed_out:
        return done("timeout", f"wall-clock limit of {limits.wall_s:g} s reached; the process group was killed")
    if final is not None:
        value = final.get("value")
        return done(final["final"], str(final.get("reason") or final["final"]),
                    value if isinstance(value, str) else None)
    if rc is not None and rc < 0:
        sig = -rc
        if sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu >= limits.cpu_s - 0.05):
            return done("timeout", f"cpu time limit of {limits.cpu_s} s reached ({_signame(sig)})")
        if sig == getattr(signal, "SIGXFSZ", None):
            return done("refused", f"file size limit of {limits.file_size_mb} MB reached")
        low = stderr.lower()
        if any(s in low for s in ("memoryerror", "bad_alloc", "out of memory", "cannot allocate memory")):
            return done("memory", f"memory limit of {limits.memory_mb} MB reached ({_signame(sig)})")
        return done("killed", f"killed by {_signame(sig)}")
    low = stderr.lower()
    if any(s in low for s in ("memoryerror", "cannot allocate memory", "failed to map segment", "out of memory")):
        return done("memory", f"memory limit of {limits.memory_mb} MB reached before the code could report "
                              "(or too low for the interpreter to start)")
    last = stderr.strip().splitlines()[-1][:300] if stderr.strip() else ""
    return done("error", f"exited with code {rc} without reporting a result" + (f": {last}" if last else ""))
