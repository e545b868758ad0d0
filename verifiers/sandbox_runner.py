"""The trusted half of the sandbox: a supervisor that confines one worker process, which runs the code.

Started by verifiers/sandbox.py as `python -I -S -B sandbox_runner.py <result fd> <payload file>`,
either under util-linux `unshare --mount --net --pid --ipc --fork --kill-child=SIGKILL` (level
"namespaces+seccomp") or directly (the fallback, "rlimits+audit-hook"). -I -S: no PYTHON*
variables, no user site, no script directory on sys.path, no .pth file of the environment runs.

Process tree (namespace mode):

    r3bench (host)  --pipe, read end-->
      unshare (util-linux; SIGKILLs its child when it dies)
        supervisor = PID 1 of a new PID namespace, root, trusted code only; holds the result fd
          worker   = PID 2, a fork of the supervisor: confined, then runs the model's code

Supervisor, at both levels: joins a fresh session keyring (the caller's is not inherited); at the fallback it
is a child subreaper. When the worker has exited it kills and reaps every other process of the run (their CPU
time is the run's: "cpu_all"), and when the host is gone (POLLERR on the result fd) it ends the run at once.
Supervisor, before the fork (it is root in fresh mount/network/PID namespaces):
  1. reads and deletes the payload file (it lives outside the scratch directory);
  2. builds a new root on a tmpfs: read-only overlayfs mounts (not binds: a host FIFO or path socket in
     them is then the overlay's own inode, not the host's; _overlay_ro) of the interpreter, the standard
     library and site-packages (NumPy, SciPy ...), /usr and the library dirs; /dev with null, zero, full,
     random, urandom only; a fresh /proc of the new PID namespace; the scratch directory, writable,
     at the same path as on the host, as a tmpfs of its own (size and inode count are kernel limits). The project checkout and $HOME are not mounted (where one lies
     under a mounted directory, an empty tmpfs covers it), and the project's packages in
     site-packages are covered too, so `import r3bench` (its PDE reference solvers) fails;
  3. pivot_root into it and detaches the old root: nothing of the host's filesystem stays reachable;
  4. builds the seccomp filter (verifiers/seccomp.py, loaded from its path before the pivot) and loads
     it into itself in the notify mode: the kernel reports every denied call of the worker and its
     children on a listener fd only the supervisor keeps; it records the call and kills the run.
  Before the pivot it also sets the IPC namespace's limits (IPC_LIMITS) and opens the run's memory
  cgroup's cgroup.procs (made by the host).
Worker, after the fork, in this order: closes the result fd (it never has a handle to it), joins the
memory cgroup, sets the rlimits (CPU, AS, FSIZE, NOFILE, NPROC, CORE), drops to an unprivileged uid
chosen per run (no groups; in a user namespace, when the host is not root: all capabilities dropped
instead), sets no_new_privs, a Landlock domain (writes only in the scratch directory and /dev's
nodes), closes every other fd (the seccomp listener too; the setup pipe last: it carries a
confinement failure to the supervisor, and is closed before any of the code runs, so the code
cannot claim one), then installs the audit-hook guards (the second layer, unchanged from the
in-process sandbox) and runs the code.

Results. The worker reports on its own pipe to the supervisor (lines "R <hex>" for each refusal the
guards saw, one "F <hex json>" for the outcome). The code runs in that process and can write to that
pipe too: its report is *the program's claim* (like its stdout). The supervisor accepts at most one
final line of the fixed format; a second one, a malformed line, an unparsable one (never an
exception in the supervisor) marks the run as tampered with, an oversized one as "report too large".
What the code cannot forge is what the supervisor observes from outside: the kernel's reports of
denied calls, the worker's exit status or killing signal, its CPU time (rusage: the CPU limit is
judged by it, not by the signal), whether the confinement was set up. Its line has a known maximum
size (payload "report_max"): the program's text in it is cut first. The supervisor writes one "S <hex json>" line with
both on the result fd, which only it holds, and exits; as PID 1 its exit makes the kernel kill every
process left in the namespace (also those that called setsid). A status the program could fake
(ok / error / refused by the guards) therefore only ever describes the program's own behaviour; the
statuses that matter for safety (timeout, memory, killed, refused by the kernel) come from outside.
"""
import sys

# what the guards refuse, each the start of a refusal's text "<kind> is refused in the sandbox (<what>)".
# verifiers/sandbox.py keeps the same tuple: a program's report may claim `refused` only with such a text
GUARD_KINDS = ("starting or signalling processes", "network access", "creating special files", "calling native code",
               "changing resource limits", "tracing or walking the interpreter", "loading this native module",
               "loading native libraries", "using this path object", "using a path of an unknown type",
               "writing outside the working directory", "linking outside the working directory", "creating more files",
               "reading other processes", "opening directories outside the working directory",
               "an action the guards could not check")


def _guard_text(text):
    """True for a refusal text of the guards' own form (one line, a known kind); anything else a program
    raises as a PermissionError is an ordinary error, not a refusal."""
    return "\n" not in text and any(text.startswith(k + " is refused in the sandbox (") for k in GUARD_KINDS)


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

    noted = [0]

    def note(msg):  # at most 5 (a program that retries a refused call in a loop is not tampering)
        if noted[0] >= 5:
            return
        noted[0] += 1
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
    # the fork server's gate: _serve sets it to 1 just before its fork. Code that reaches this list through a
    # frame could set it too; that is the audit hook's known limit (DISARM switches it off altogether): forks
    # stay bounded by RLIMIT_NPROC, the PID namespace and the supervisor's kill
    forks = [0]

    def hook(event, args, _watch=watch, _kinds=tuple(kinds.items()), _one=tuple(one.items()),
             _two=tuple(two.items()), _native=native, _wd=wd, _wdp=wd + "/", _mypid=str(posix.getpid()),
             _max=max_files, _created=set(), _sent=[0], _rfd=rfd, _write=write, _lstat=posix.lstat,
             _stat=posix.stat, _readlink=posix.readlink, _getcwd=posix.getcwd, _pp_str=pp_str,
             _pathtypes=frozenset({pathlib.PurePath, pathlib.PurePosixPath, pathlib.Path, pathlib.PosixPath}),
             _enc=sys.getfilesystemencoding(), _type=type, _issubclass=issubclass, _len=len, _str=str,
             _bytes=bytes, _int=int, _tuple=tuple, _dict=dict, _str_str=str.__str__, _bjoin=b"".join,
             _W=W, _O_CREAT=os.O_CREAT, _O_DIR=getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_PATH", 0),
             _Refused=PermissionError, _MemoryError=MemoryError, _OSError=OSError, _ValueError=ValueError,
             _BaseException=BaseException, _repr=repr, _forks=forks):
        if _type(event) is not _str or event not in _watch:
            return
        if event == "os.fork" and _forks[0] > 0:  # the fork server's own fork (_serve), one at a time
            _forks[0] -= 1
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
    return forks


def _run_code(payload, rfd, cmd_fd=None):
    """The old runner's body: compile, install the guards, exec, report one final line on `rfd`."""
    import builtins, json, linecache, os, posix, traceback, types
    write = posix.write
    sys.path[:0] = payload["paths"]
    lim = payload["limits"]
    cap = max(1024, lim["output_kb"] * 1024)
    encoder = json.JSONEncoder(ensure_ascii=False)  # UTF-8: a non-ASCII value is not 6 bytes a character

    def send(out):
        try:
            write(rfd, b"F " + encoder.encode(out).encode("utf-8", "backslashreplace").hex().encode() + b"\n")
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
    real_fork = posix.fork  # before the guards replace it (the fork server's own)
    if cmd_fd is not None:  # the fork server's primitives, taken before the program runs: the program may
        # replace os.waitpid, os._exit, ... in the modules, and the serving loop would then run its code between
        # calls, outside every call's clock (held-out sandbox round 6)
        import signal as _signal
        prims = {"read": posix.read, "write": posix.write, "waitpid": posix.waitpid, "exit": posix._exit,
                 "sigmask": _signal.pthread_sigmask, "block": _signal.SIG_BLOCK, "setmask": _signal.SIG_SETMASK,
                 "signals": _signal.valid_signals(), "setitimer": _signal.setitimer,
                 "itimers": (_signal.ITIMER_REAL, _signal.ITIMER_VIRTUAL, _signal.ITIMER_PROF)}
    forks = _install_guards(os.path.realpath(os.getcwd()), rfd, int(lim["max_files"]))
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
        refused = next((x for x in chain if isinstance(x, PermissionError) and _guard_text(str(x))), None)
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
    if cmd_fd is not None and out["final"] == "ok":
        _serve(payload["calls"], module, cmd_fd, rfd, real_fork, forks, cap, memory, prims)


def _serve(spec, module, cmd_fd, rfd, real_fork, forks, cap, memory, prims):
    """The fork server (the worker, after the code's top level): for each call the supervisor sends (a line
    "<index> <hex json inputs>" on cmd_fd), a fresh fork runs the call's code in the module's namespace and
    reports "C <hex json>"; after each call "G" (ready). This runs in the program's process, so all of it is
    the program's claim: the supervisor's clock times each call from sending its inputs to receiving its
    result, and kills the call's processes at its limit."""
    import json, traceback
    write, read, waitpid, exit_ = prims["write"], prims["read"], prims["waitpid"], prims["exit"]
    compiled = compile(spec["code"], "<sandbox-call>", "exec")
    # no handler of the program runs in the serving process: every signal blocked here (a timer of the start
    # computed between calls: held-out sandbox round 6), its interval timers stopped; each call gets the mask back
    mask = prims["sigmask"](prims["block"], prims["signals"])
    for which in prims["itimers"]:
        prims["setitimer"](which, 0)
    buf = b""
    while True:
        write(rfd, b"G\n")
        while b"\n" not in buf:
            chunk = read(cmd_fd, 1 << 20)
            if not chunk:
                return
            buf += chunk
        line, _, buf = buf.partition(b"\n")
        idx, _, body = line.partition(b" ")
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
        forks[0] = 1
        try:
            pid = real_fork()
        except OSError:
            continue  # no "C" line: the supervisor reports the call as ended without a result
        finally:
            forks[0] = 0
        if pid:
            try:
                waitpid(pid, 0)
            except OSError:
                pass
            continue
        try:  # the call's process
            prims["sigmask"](prims["setmask"], mask)
            out = {"i": int(idx), "final": "ok", "reason": "ran to completion", "value": None}
            try:
                module.__dict__.update(json.loads(bytes.fromhex(body.decode("ascii"))))
                exec(compiled, module.__dict__)
                value = repr(module.__dict__.get("result"))
                out["value"] = value if len(value) <= cap else value[:cap]
            except MemoryError:
                out.update(final="memory", reason=memory)
            except BaseException as e:
                out.update(final="error", reason=traceback.format_exception_only(type(e), e)[-1].strip()[:500])
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            except Exception:
                pass
            write(rfd, b"C " + json.dumps(out, ensure_ascii=False).encode("utf-8", "backslashreplace").hex().encode()
                  + b"\n")
        finally:
            exit_(0)


# -- supervisor: namespaces, mounts, confinement ---------------------------------------------------------

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP, PR_SET_DUMPABLE = 38, 24, 4
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
SYS_CAPSET = {"x86_64": 126, "aarch64": 91}


DEV_NODES = ("null", "zero", "full", "random", "urandom")
# The run's fresh /proc shows its processes only (`subset=pid`, Linux 5.8+): no host-wide entry at all. Those
# fingerprint the machine (the boot id and kernel command line: held-out sandbox round 4), expose the kernel's
# internals (kcore, the key list, timers, the scheduler) or carry signals between runs: host-wide counters a
# concurrent run moves and another reads (the fork count and CPU jiffies in stat, the task count in loadavg,
# file-nr, meminfo: held-out sandbox round 5 decoded 12 of 12 bits through four of them). Where the kernel
# lacks `subset=pid`, these are masked one by one: read-only /dev/null binds over the files, an empty read-only
# tmpfs over the directories (sys: the host-wide counters of fs/ and kernel/, among its settings)
PROC_MASKED = ("cmdline", "kcore", "keys", "key-users", "timer_list", "sched_debug", "kallsyms", "latency_stats",
               "stat", "loadavg", "meminfo", "uptime", "vmstat", "zoneinfo", "buddyinfo", "pagetypeinfo", "slabinfo",
               "diskstats", "partitions", "interrupts", "softirqs", "schedstat", "locks", "swaps", "vmallocinfo",
               "cpuinfo", "version", "sys", "pressure", "irq", "fs", "driver", "tty", "bus", "acpi", "scsi")


class SetupError(Exception):
    pass


def _libc():
    import ctypes
    return ctypes, ctypes.CDLL(None, use_errno=True)


def _mount(libc, ctypes, src, dst, fstype, flags, data=None):
    enc = (lambda s: None if s is None else s.encode())
    if libc.mount(enc(src), enc(dst), enc(fstype), ctypes.c_ulong(flags), enc(data)) != 0:
        import os
        e = ctypes.get_errno()
        raise SetupError(f"mount({src!r} -> {dst!r}, {fstype!r}, {flags:#x}): {os.strerror(e)}")


def _bind_ro(libc, ctypes, src, dst, nodev=True):
    import os
    _mount(libc, ctypes, src, dst, None, MS_BIND | (MS_REC if nodev else 0))
    keep = 0  # a remount must keep the flags the kernel locked on the source (in a user namespace)
    try:
        f = os.statvfs(dst).f_flag
        keep = (MS_NOEXEC if f & os.ST_NOEXEC else 0) | (MS_NOSUID if f & os.ST_NOSUID else 0) | \
               (MS_NODEV if f & os.ST_NODEV else 0)
    except OSError:
        pass
    try:
        _mount(libc, ctypes, None, dst, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | keep
               | (MS_NODEV if nodev else MS_NOEXEC))
    except SetupError:
        # never leave a writable bind behind (a caller may go on without this one); OSError ends the setup
        if libc.umount2(dst.encode(), MNT_DETACH) != 0:
            raise OSError(ctypes.get_errno(), f"umount2 of a bind not made read-only: {dst}")
        raise


def _mountpoints():
    """Every mount point of this mount namespace (/proc/self/mountinfo, octal escapes decoded)."""
    out = []
    try:
        with open("/proc/self/mountinfo", "rb") as f:
            for line in f:
                fields = line.split(b" ")
                if len(fields) > 4:
                    parts = fields[4].split(b"\\")  # "\040" is a space (no `re`: the supervisor's start is timed)
                    p = parts[0] + b"".join(bytes([int(q[:3], 8)]) + q[3:] if q[:3].isdigit() else b"\\" + q
                                            for q in parts[1:])
                    out.append(p.decode("utf-8", "surrogateescape"))
    except (OSError, ValueError):
        pass
    return out


def _overlay_ro(libc, ctypes, src, dst, empty):
    """A read-only overlayfs at `dst` whose one real layer is `src` (`empty`, an empty directory, is the second
    lower layer: overlayfs takes no single lower layer without an upper one). Why not a bind: a bind shows the
    host's inodes, and a FIFO or a listening path socket is found by its inode, so opening a host FIFO in a
    bound tree for reading (no Landlock right refuses that, and the read-only flag does not cover it) read
    what a host process wrote into it, and connect() reached a host socket. An overlay has inodes of its own:
    its FIFO is a pipe of the overlay's inode (nothing the host writes arrives there) and its socket inode
    has no listener (ECONNREFUSED), also for one the host makes during the run, while regular files,
    directories and symlinks read as the host's. Device nodes are inert (nodev). Raises SetupError."""
    # overlayfs' option separators (',' between options, ':' between layers) escaped: a tree or a temp directory
    # with one in its path was bound instead, and a host FIFO there read (held-out sandbox round 6, a TMPDIR
    # with ',' and ':')
    _mount(libc, ctypes, "overlay", dst, "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV,
           f"lowerdir={_ovl_escape(src)}:{_ovl_escape(empty)}")
    import os
    try:  # a layer overlayfs mounts but cannot read (seen nowhere yet) must not take the whole sandbox down
        os.listdir(dst)
    except OSError as e:
        libc.umount2(dst.encode(), MNT_DETACH)
        raise SetupError(f"overlay of {src!r} mounted but not readable: {e.strerror}")


def _ovl_escape(path):
    return path.replace("\\", "\\\\").replace(":", "\\:").replace(",", "\\,")


def _bind_tree(libc, ctypes, src, dst, empty, mounts, facts):
    """`src` (a directory tree, with the mounts beneath it) read-only at `dst`: overlayfs mounts (above), or
    where one cannot be made (no overlayfs, a stack too deep), a recursive read-only bind, said in `facts`."""
    import os
    try:
        _overlay_ro(libc, ctypes, src, dst, empty)
    except SetupError as e:
        _bind_ro(libc, ctypes, src, dst)
        facts.setdefault("bind", []).append(f"{src}: {e}"[:200])
        return
    facts.setdefault("overlay", []).append(src)
    # an overlay does not show the mounts beneath its layer (a bind with MS_REC did): each gets its own
    subs = sorted((m for m in mounts if m != src and m.startswith(src.rstrip("/") + "/")),
                  key=lambda m: (m.count("/"), m))
    for m in subs:
        d = dst + m[len(src.rstrip("/")):] if src != "/" else dst + m
        why = None
        if os.path.isdir(m) and os.path.isdir(d):
            try:
                _overlay_ro(libc, ctypes, m, d, empty)
                facts["overlay"].append(m)
                continue
            except SetupError as e:
                why = f"{m}: {e}"[:200]
        elif not (os.path.isfile(m) and os.path.isfile(d)):
            continue
        try:  # a file mounted there (a regular file: the host's own), or a directory no overlay took
            _bind_ro(libc, ctypes, m, d)
            if why:
                facts.setdefault("bind", []).append(why)
        except SetupError:
            pass  # the mount point's own directory or file stays (_bind_ro leaves no writable bind)


def _build_root(plan, root, wd, scratch, facts=None, proc_subset=True):
    """Mount the new root at `root` (see the module docstring) and pivot into it; cwd is then `wd`. `facts`
    gets how the trees were mounted: {"overlay": [trees], "bind": ["tree: why not an overlay"]}."""
    import os
    ctypes, libc = _libc()
    facts = {} if facts is None else facts
    mounts = _mountpoints()  # the host's (this namespace is a copy), before any of the run's
    # the overlays' empty second layer: beside the root, outside it (not visible in the run; the host
    # removes it with the run's directory)
    empty = os.path.join(os.path.dirname(root), "empty")
    os.makedirs(empty, mode=0o755, exist_ok=True)
    _mount(libc, ctypes, None, "/", None, MS_REC | MS_PRIVATE)  # nothing propagates back to the host
    _mount(libc, ctypes, "tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=2m")
    tmpfs = [root]
    for kind, path, extra in plan:  # parents before children (sorted by the host)
        dst = root + path
        if kind == "symlink":
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            os.symlink(extra, dst)
        elif kind == "bind":
            if not os.path.isdir(path):
                continue
            os.makedirs(dst, exist_ok=True)
            _bind_tree(libc, ctypes, path, dst, empty, mounts, facts)
        elif kind == "file":
            if not os.path.isfile(path):
                continue
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            open(dst, "a").close()
            _bind_ro(libc, ctypes, path, dst)
        elif kind == "mask":  # an empty read-only directory over something a bind would expose
            if os.path.isdir(dst):
                _mount(libc, ctypes, "tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=64k")
                tmpfs.append(dst)
    dev = root + "/dev"
    os.makedirs(dev, exist_ok=True)
    for name in DEV_NODES:
        # read-only binds: the nodes work (a device's reads and writes are not the mount's), but the host's
        # inodes cannot be changed (os.utime('/dev/null') once set the host's node's times)
        open(f"{dev}/{name}", "a").close()
        _bind_ro(libc, ctypes, f"/dev/{name}", f"{dev}/{name}", nodev=False)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{dev}/{name}")
    os.makedirs(root + "/proc", exist_ok=True)
    try:  # the processes' entries only (Linux 5.8+): none of the host-wide ones
        if not proc_subset:
            raise SetupError("subset=pid not asked for")
        _mount(libc, ctypes, "proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "subset=pid")
        facts["proc"] = "subset=pid"
    except SetupError:
        _mount(libc, ctypes, "proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        facts["proc"] = "masked"
        for name in PROC_MASKED:
            if os.path.isfile(f"{root}/proc/{name}"):
                _bind_ro(libc, ctypes, "/dev/null", f"{root}/proc/{name}", nodev=False)
            elif os.path.isdir(f"{root}/proc/{name}"):
                _mount(libc, ctypes, "tmpfs", f"{root}/proc/{name}", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                       "mode=0555,size=4k")
                tmpfs.append(f"{root}/proc/{name}")
    os.makedirs(root + wd, exist_ok=True)
    # the scratch directory: a tmpfs of its own, so its size and file count are kernel limits (the
    # audit hook's file count is not a limit once the hook is switched off), and nothing of it is on disk
    _mount(libc, ctypes, "tmpfs", root + wd, "tmpfs", MS_NOSUID | MS_NODEV,
           f"size={int(scratch['size_mb'])}m,nr_inodes={int(scratch['inodes'])},mode=0700,"
           f"uid={int(scratch['uid'])},gid={int(scratch['uid'])}")
    for t in reversed(tmpfs):
        _mount(libc, ctypes, None, t, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    nr = SYS_PIVOT_ROOT.get(os.uname().machine)
    if nr is None:
        raise SetupError(f"pivot_root: unknown architecture {os.uname().machine}")
    os.chdir(root)
    if libc.syscall(nr, b".", b".") != 0:
        raise SetupError(f"pivot_root: {os.strerror(ctypes.get_errno())}")
    if libc.umount2(b".", MNT_DETACH) != 0:  # the old root, stacked beneath: detach it
        raise SetupError(f"umount2(old root): {os.strerror(ctypes.get_errno())}")
    os.chdir(wd)


# The IPC namespace's own limits (per namespace: written by the supervisor, root there, before the pivot).
# The defaults are unbounded for shared memory (shmall 2^64) and allow 32,000 message queues of 16 KB: a
# run held 1 GB of SysV shared memory and ~500 MB of queued messages outside RLIMIT_AS. Small values here,
# and the memory cgroup (where there is one) counts what is left.
IPC_LIMITS = (("kernel/shmmax", "8388608"), ("kernel/shmall", "4096"), ("kernel/shmmni", "16"),
              ("kernel/msgmni", "16"), ("kernel/msgmnb", "16384"), ("kernel/msgmax", "8192"),
              ("kernel/sem", "32 256 32 16"), ("fs/mqueue/queues_max", "4"), ("fs/mqueue/msg_max", "10"),
              ("fs/mqueue/msgsize_max", "8192"))


def _limit_ipc():
    """Write IPC_LIMITS into this IPC namespace; returns the ones that could not be set (an older kernel
    or a user namespace may refuse some) for the setup facts."""
    failed = []
    for name, value in IPC_LIMITS:
        try:
            with open("/proc/sys/" + name, "w") as f:
                f.write(value)
        except OSError as e:
            failed.append(f"{name}: {e.strerror}")
    return failed


def _drop_capabilities():
    """In a user namespace the worker is uid 0 there: clear every capability set (capset) instead."""
    import os
    ctypes, libc = _libc()
    nr = SYS_CAPSET.get(os.uname().machine)
    for cap in range(64):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable x 2: all zero
    if nr is None or libc.syscall(nr, header, data) != 0:
        raise SetupError("capset: could not drop capabilities")


SYS_LANDLOCK = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}  # create_ruleset, add_rule, restrict_self
LL_WRITE_FILE, LL_TRUNCATE = 1 << 1, 1 << 14
LL_SCOPE_ABSTRACT_UNIX, LL_SCOPE_SIGNAL = 1, 2


def _landlock_abi():
    """Landlock's ABI version here (0: none)."""
    import os
    ctypes, libc = _libc()
    nrs = SYS_LANDLOCK.get(os.uname().machine)
    if nrs is None:
        return 0
    v = libc.syscall(nrs[0], None, ctypes.c_size_t(0), ctypes.c_uint32(1))  # LANDLOCK_CREATE_RULESET_VERSION
    return max(0, v)


def _landlock(abi, writable):
    """Opening a file for writing only beneath `writable` (the scratch directory, the /dev nodes), and (ABI 6)
    no signals to processes outside this domain (the supervisor). The read-only mounts already refuse writes
    to regular files; a FIFO in them they do not (through an overlay it is the overlay's own pipe, through a
    plain bind, where no overlay could be made, the host's). Raises SetupError."""
    import os
    ctypes, libc = _libc()
    create, add_rule, restrict = SYS_LANDLOCK[os.uname().machine]
    handled = LL_WRITE_FILE | (LL_TRUNCATE if abi >= 3 else 0)
    scoped = (LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL) if abi >= 6 else 0
    attr = (ctypes.c_uint64 * 3)(handled, 0, scoped)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    rfd = libc.syscall(create, attr, ctypes.c_size_t(size), ctypes.c_uint32(0))
    if rfd < 0:
        raise SetupError(f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]
    try:
        for path in writable:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                rule = PathBeneath(handled, fd)
                if libc.syscall(add_rule, rfd, 1, ctypes.byref(rule), ctypes.c_uint32(0)) != 0:  # PATH_BENEATH
                    raise SetupError(f"landlock_add_rule({path}): {os.strerror(ctypes.get_errno())}")
            finally:
                os.close(fd)
        if libc.syscall(restrict, rfd, ctypes.c_uint32(0)) != 0:
            raise SetupError(f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(rfd)


def _confine(payload, seccomp_filter, cgroup_fds=()):
    """In the worker: the memory cgroup, rlimits, the unprivileged identity, no_new_privs, seccomp (unless the
    supervisor already loaded it, in the notify mode). Raises SetupError."""
    import os, resource
    ctypes, libc = _libc()
    for cgroup_fd in cgroup_fds:  # "0": the writing process; still root here, and its children follow it
        try:
            os.write(cgroup_fd, b"0")
        except OSError as e:
            raise SetupError(f"joining the run's cgroup: {e.strerror}")
        os.close(cgroup_fd)
    for res, soft, hard in payload["rlimits"]:
        resource.setrlimit(getattr(resource, res), (soft, hard))
    try:  # the OOM killer's first choice when memory runs out above the run (the caller's own cgroup or
        # the host): the run, never the trainer that started it (raising one's own score needs no privilege)
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    except OSError:
        pass
    if payload["mode"] == "namespaces":
        uid = payload["uid"]
        if uid is not None:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            if os.getuid() != uid or os.geteuid() != uid:
                raise SetupError("setresuid did not take")
        else:
            _drop_capabilities()
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise SetupError("prctl(PR_SET_NO_NEW_PRIVS) failed")
        if seccomp_filter is not None and not seccomp_filter.notify:
            seccomp_filter.load()
        if payload.get("landlock_abi"):
            _landlock(payload["landlock_abi"], [payload["wd"]] + ["/dev/" + n for n in DEV_NODES])


SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}
KEYCTL_JOIN_SESSION_KEYRING = 1
PR_SET_CHILD_SUBREAPER = 36


def _new_session_keyring():
    """Join a new anonymous session keyring (keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL)): the run's processes
    inherit it instead of the caller's. True, or why not (a kernel without keys: nothing to inherit either)."""
    import os
    ctypes, libc = _libc()
    nr = SYS_KEYCTL.get(os.uname().machine)
    if nr is None:
        return f"no keyctl number for {os.uname().machine}"
    if libc.syscall(nr, KEYCTL_JOIN_SESSION_KEYRING, None, 0, 0, 0) < 0:
        return f"keyctl(KEYCTL_JOIN_SESSION_KEYRING): {os.strerror(ctypes.get_errno())}"
    return True


def _descendants():
    """Pids of this process's descendants (/proc/<pid>/task/<tid>/children, breadth first)."""
    import os
    out, todo, seen = [], [os.getpid()], set()
    while todo:
        p = todo.pop()
        try:
            tids = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tids:
            try:
                with open(f"/proc/{p}/task/{t}/children") as f:
                    kids = [int(x) for x in f.read().split()]
            except (OSError, ValueError):
                continue
            for k in kids:
                if k not in seen:
                    seen.add(k)
                    out.append(k)
                    todo.append(k)
    return out


SERVE_CPU_S, SERVE_CPU_PER_CALL_S = 0.2, 0.05  # the fork server's own CPU: a margin, and a fork + a read + a write a call


def _proc_cpu(pid):
    """A process's user CPU seconds (/proc/<pid>/stat), 0.0 where it cannot be read. User time only: a hook of
    the program runs Python (user time), while the fork server's own forks copy page tables in system time,
    which grows with the worker's memory (a 700 MB top level: tens of ms a fork)."""
    import os
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rpartition(b")")[2].split()
        return int(fields[11]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def _zombie(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].split()[:1] in ([b"Z"], [b"X"], [])
    except OSError:
        return True


def _end_but_worker(worker):
    """Between a fork server's calls (the start's top level or a call has ended, the worker waits for the next
    inputs): SIGKILL every process of the run but the worker, so that nothing the start or a call forked works
    on into a later call's time (a helper writing into shared memory the calls read: held-out sandbox round 5).
    A few passes: a process forked meanwhile is caught by the next. Returns the worker's thread count."""
    import os, signal, time
    for _ in range(3):
        others = [p for p in _descendants() if p != worker and not _zombie(p)]
        for p in others:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        if not others:
            break
        time.sleep(0.001)
    try:
        with open(f"/proc/{worker}/status") as f:
            return next((int(line.split()[1]) for line in f if line.startswith("Threads:")), 1)
    except (OSError, ValueError):
        return 1


def _end_run(mode, worker):
    """SIGKILL every process of the run but this one and reap them all (a few passes: a process killed while
    it forked leaves no child, the kernel sees to that, but its orphans come here one level at a time at the
    fallback). Namespaces: kill(-1) as PID 1 reaches every process of the namespace. Fallback: this process is
    a child subreaper, so the run's processes are its descendants whatever session they are in. Returns how
    many were still there after 2 s (0: none)."""
    import os, signal, time
    end = time.monotonic() + 2.0
    while True:
        for p in [-1] if mode == "namespaces" else ([worker] if worker else []) + _descendants():
            try:  # each on its own: one already gone (ESRCH) must not spare the others
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        while True:  # reap what has exited
            try:
                got, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return 0
            if not got:
                break
        if time.monotonic() > end:
            return len(_descendants()) or 1
        time.sleep(0.002)


def _report_line(tag, obj):
    import json  # UTF-8, not \u escapes (12 bytes a character outside the BMP); a lone surrogate escaped
    return tag + b" " + json.dumps(obj, ensure_ascii=False).encode("utf-8", "backslashreplace").hex().encode() + b"\n"


def _parse_report(data, cap):
    """The worker's lines -> (final, notes, problem). Only one final line of the fixed format counts.

    The code can write anything here, so nothing in it may raise: a JSON nesting deep enough for a
    RecursionError once took the supervisor down before it reported, which hid a SIGSYS it had seen."""
    try:
        return _parse_report_lines(data, cap)
    except Exception as e:  # RecursionError, MemoryError's cousins: the report is unusable, the run is not
        return None, [], f"a report on the program's report channel that could not be parsed ({type(e).__name__})"


def _parse_report_lines(data, cap):
    import json
    finals, notes, problem = [], [], None
    if len(data) > cap:
        return None, [], f"report too large: the program's report channel carried more than {cap} bytes"
    for line in data.splitlines():
        kind, _, body = line.partition(b" ")
        try:
            text = bytes.fromhex(body.decode("ascii")).decode("utf-8", "replace")
        except (ValueError, UnicodeDecodeError):
            problem = "a malformed line on the program's report channel"
            continue
        if kind in (b"G", b"C"):  # the fork server's lines (handled as they come, in _supervise)
            continue
        if kind == b"R":
            if len(notes) < 5:
                notes.append(text[:500])
        elif kind == b"F":
            try:
                msg = json.loads(text)
            except (ValueError, RecursionError):
                problem = "a malformed report on the program's report channel"
                continue
            ok = (isinstance(msg, dict) and set(msg) == {"final", "reason", "value"}
                  and msg["final"] in ("ok", "error", "memory", "refused")
                  and isinstance(msg["reason"], str) and (msg["value"] is None or isinstance(msg["value"], str)))
            if not ok:
                problem = "a report of the wrong format on the program's report channel"
                continue
            finals.append(msg)
        else:  # also "X": setup failures come on their own pipe, closed before the code runs
            problem = "an unknown line on the program's report channel"
    if len(finals) > 1:
        problem = f"{len(finals)} final reports on the program's report channel (the code wrote its own)"
    final = finals[0] if len(finals) == 1 else None
    return final, notes, problem


def _supervise(rfd, payload_path):
    import json, os, resource, select, signal, time
    t_start = time.monotonic()
    with open(payload_path, "rb") as f:
        payload = json.loads(f.read())
    os.unlink(payload_path)
    seccomp_filter, setup = None, {"mode": payload["mode"], "seccomp": False, "root": False}
    cgroup_fds = []
    # a fresh, empty session keyring for the run, at every level and before the seccomp filter (which denies
    # keyctl): the caller's session keyring came along with possessor rights (/proc/keys listed its keys'
    # descriptions; without the filter KEYCTL_READ returned a key's payload)
    setup["keyring"] = _new_session_keyring()
    if payload["mode"] != "namespaces":
        # the fallback: orphans of the run come to this process (not the host's init), so that it can kill and
        # reap every process of the run, also one in a session of its own, and count their CPU time
        _, libc = _libc()
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    try:
        if payload["mode"] == "namespaces":
            if payload.get("seccomp_module"):
                import importlib.util
                spec = importlib.util.spec_from_file_location("_r3_seccomp", payload["seccomp_module"])
                mod = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(mod)
                try:  # notify: denied calls reported to this process by the kernel (see _watch_denials)
                    seccomp_filter = mod.build(notify=True)
                    setup["seccomp"] = True
                except mod.SeccompUnavailable as e:
                    try:
                        seccomp_filter = mod.build(kill=True)
                        setup["seccomp"] = True
                        setup["seccomp_notify_error"] = str(e)[:300]
                    except mod.SeccompUnavailable as e2:
                        setup["seccomp_error"] = str(e2)[:300]
            failed = _limit_ipc()
            setup["ipc_limits"] = not failed
            if failed:
                setup["ipc_limits_error"] = "; ".join(failed)[:300]
            procs = payload.get("cgroup_procs") or []  # the memory cgroup, a v1 cpuacct one
            for path in [procs] if isinstance(procs, str) else procs:  # opened here: after the pivot the host's
                cgroup_fds.append(os.open(path, os.O_WRONLY | os.O_CLOEXEC))  # cgroup tree is gone
            trees = {}
            _build_root(payload["plan"], payload["root"], payload["wd"], payload["scratch"], trees,
                        payload.get("proc_subset", True))
            setup["root"] = True
            setup["proc"] = trees.get("proc")  # "subset=pid", or "masked" (an older kernel)
            # "overlay": every bound tree is an overlayfs mount (host FIFOs and path sockets there are not
            # the host's); "bind (...)": at least one is a plain bind, and why
            setup["bound_trees"] = "overlay" if not trees.get("bind") else "bind (" + "; ".join(trees["bind"])[:300] + ")"
            payload["landlock_abi"] = setup["landlock_abi"] = _landlock_abi()
    except (SetupError, OSError) as e:
        os.write(rfd, _report_line(b"S", {"setup_error": f"{type(e).__name__}: {e}"[:500], "setup": setup}))
        return
    setup["setup_ms"] = round(1000 * (time.monotonic() - t_start), 2)
    # not dumpable: its /proc entries (fds, memory) are closed to the worker also where both are uid 0
    # of a user namespace (the worker then differs only in capabilities)
    _, libc = _libc()
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    notify_fd = None
    if seccomp_filter is not None and seccomp_filter.notify:
        # loaded here, after the mounts, so the worker and everything it forks inherit it; the listener fd
        # stays with this process (the worker closes its copy before the code runs). The supervisor makes
        # none of the denied calls from here on.
        try:
            seccomp_filter.load()
            notify_fd = seccomp_filter.notify_fd
            setup["seccomp_notify"] = True
        except Exception as e:  # SeccompUnavailable: the worker loads a killing filter instead
            setup["seccomp_notify_error"] = str(e)[:300]
            try:
                seccomp_filter = mod.build(kill=True)
            except Exception as e2:
                seccomp_filter, setup["seccomp"], setup["seccomp_error"] = None, False, str(e2)[:300]
    pr, pw = os.pipe()
    # the setup pipe: the worker writes here only if its confinement failed, and closes it before the
    # code runs, so a "setup failed" report cannot come from the code (it once could: an "X" line on
    # the report pipe plus exit code 70 made any program look like a sandbox failure)
    sr, sw = os.pipe()
    spec = payload.get("calls")
    cr, cw = os.pipe() if spec else (None, None)  # the fork server's calls: supervisor -> worker
    # SIGINT is the one signal Python handles (KeyboardInterrupt); as PID 1 the supervisor gets from inside
    # its namespace only signals it handles, so ignoring it leaves the worker none that would end the
    # supervisor before it reports. That matters where the worker has the supervisor's uid (a user
    # namespace, when the host is not root): kill(1, SIGINT) turned any outcome into "sandbox failure".
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the worker
        try:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            os.close(rfd)
            os.close(pr)
            os.close(sr)
            if cw is not None:
                os.close(cw)
            try:
                _confine(payload, seccomp_filter, cgroup_fds)
                prev = 2  # close everything else, also the seccomp listener (with it the code could let its
                for keep in sorted(fd for fd in (pw, sw, cr) if fd is not None) + [4096]:  # own calls through)
                    os.closerange(prev + 1, keep)
                    prev = keep
                os.close(sw)
            except (SetupError, OSError, ValueError) as e:
                os.write(sw, f"{type(e).__name__}: {e}"[:500].encode("utf-8", "replace"))
                os._exit(70)
            _run_code(payload, pw, cr)
        finally:
            os._exit(0)
    os.close(pw)
    os.close(sw)
    if cr is not None:
        os.close(cr)
    for cgroup_fd in cgroup_fds:
        os.close(cgroup_fd)
    denied = []
    # the fork server (payload "calls"): the supervisor sends each call's inputs when the worker says it is ready
    # ("G"), times the call on its own clock until its "C" line comes, and at the call's limit kills the run
    n_calls = len(spec["inputs"]) if spec else 0
    calls, cur, t_call, lines = [], None, 0.0, bytearray()
    vcap = max(1024, int(payload["limits"]["output_kb"]) * 1024)  # a call's value, as the worker cuts it
    call_timeout = start_error = None
    serve_cpu = [None]  # the serving process's CPU when the start ended

    def end_calls():
        nonlocal cw
        if cw is not None:
            os.close(cw)  # EOF: the worker's loop returns and it exits
            cw = None

    def stop_run():
        """No more calls, and every process of the run ended: in the namespace every process but this one
        (kill(-1) as PID 1), at the fallback the worker (its tree at the run's end)."""
        end_calls()
        try:
            os.kill(-1 if payload["mode"] == "namespaces" else pid, signal.SIGKILL)
        except OSError:
            pass

    def on_lines(chunk):
        """The fork server's complete "G" / "C" lines in `chunk` (the rest is the report, parsed at the end)."""
        nonlocal cur, t_call, start_error
        lines.extend(chunk)
        while b"\n" in lines:
            i = lines.index(b"\n")
            line = bytes(lines[:i])
            del lines[:i + 1]
            kind, _, body = line.partition(b" ")
            now = time.monotonic()
            if kind == b"C" and cur is not None:
                try:
                    msg = json.loads(bytes.fromhex(body.decode("ascii")).decode("utf-8", "replace"))
                except (ValueError, RecursionError):
                    msg = None
                if isinstance(msg, dict) and msg.get("i") == cur and msg.get("final") in ("ok", "error", "memory") \
                        and isinstance(msg.get("reason"), str) and (msg.get("value") is None or isinstance(msg["value"], str)):
                    calls.append({"status": msg["final"], "reason": msg["reason"][:2000], "seconds": now - t_call,
                                  "value": None if msg["value"] is None else msg["value"][:vcap]})
                else:
                    calls.append({"status": "error", "reason": "a malformed result line for the call",
                                  "seconds": now - t_call, "value": None})
                cur = None
                # the call has given its result: its processes end now (one that patched its exit worked on
                # after reporting, outside every call's clock: held-out sandbox round 6)
                _end_but_worker(pid)
            elif kind == b"G" and cw is not None:
                if cur is not None:  # ready again without a result: the call's process died
                    calls.append({"status": "error", "reason": "the call's process ended without a result",
                                  "seconds": now - t_call, "value": None})
                    cur = None
                # the start (or the call) has ended: no process of it works on into the next call's time
                threads = _end_but_worker(pid)
                # and no code of the program works in the serving process itself: its CPU since the start ended
                # is the fork server's own (a fork, a read, a write a call) unless a hook of the program runs
                # there (os.register_at_fork's after_in_parent worked 0.6 s beside the calls: held-out round 7)
                cpu = _proc_cpu(pid)
                if serve_cpu[0] is None:
                    serve_cpu[0] = cpu
                elif cpu - serve_cpu[0] > SERVE_CPU_S + SERVE_CPU_PER_CALL_S * len(calls):
                    start_error = (f"the serving process used {cpu - serve_cpu[0]:.2f} s of CPU over {len(calls)} "
                                   "call(s): code of the program ran in it, outside the calls' clocks (a fork hook, "
                                   "a profiler, a callback); the fork server runs none")
                if threads > 1 and not start_error:
                    start_error = (f"the {'start' if not calls else 'serving process'} left {threads - 1} thread(s) "
                                   "running beside the fork server, which serves calls from one thread (a thread "
                                   "would work on outside the calls' clock); join them before the top level ends")
                if start_error:
                    stop_run()
                    continue
                if len(calls) >= n_calls:
                    end_calls()
                    continue
                cur = len(calls)
                inputs_line = str(cur).encode() + b" " + json.dumps(spec["inputs"][cur]).encode().hex().encode() + b"\n"
                # the clock starts before the write: the write can wake the call's process on this CPU and
                # preempt this one, and a clock read after it then missed the call's first milliseconds
                t_call = time.monotonic()
                try:
                    os.write(cw, inputs_line)
                except OSError:
                    end_calls()

    def on_denial():
        """A denied call, as the kernel reports it: record it and end the run, every process of it (as PID 1,
        kill(-1) reaches all of the namespace but this process; the caller is held in the call meanwhile)."""
        got = seccomp_filter.receive()
        if got is None:
            return
        if len(denied) < 5:
            denied.append(got[1] + ("" if got[0] == pid else " (in a child process)"))
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass

    # the worker's report: its value (at most output_kb K characters) as JSON (a character at most 6 bytes,
    # a control character a __repr__ returned) in hex (x2), plus 5 refusal notes and the reason
    cap = (12 * max(1024, int(payload["limits"]["output_kb"]) * 1024) + 65536) * (1 + n_calls)
    data, eof, exited, too_large = bytearray(), False, None, 0
    # the host kills the whole tree at wall_s; this deadline only matters when the host itself died
    deadline = t_start + float(payload["limits"]["wall_s"]) + 2.0
    poller = select.poll()
    poller.register(pr, select.POLLIN)
    if notify_fd is not None:
        poller.register(notify_fd, select.POLLIN)
    # the result fd's write end, no events asked: POLLERR once the host's read end is closed, i.e. the host
    # (the caller) died. Then the run ends at once (not at wall_s + 2 s): every process of it is killed
    poller.register(rfd, 0)
    while exited is None:
        if time.monotonic() > deadline:
            try:
                os.kill(pid, 9)
            except OSError:
                pass
            exited = os.wait4(pid, 0)
            break
        events = poller.poll(50 if not eof else 5)
        ready = [fd for fd, ev in events if fd != rfd]
        if any(fd == rfd for fd, _ in events):
            _end_run(payload["mode"], pid)
            os._exit(0)
        if eof and pr in ready:
            ready.remove(pr)
        if notify_fd in ready:
            on_denial()
        if pr in ready:
            chunk = os.read(pr, 65536)
            if not chunk:
                eof = True
                poller.unregister(pr)
            elif len(data) <= cap:
                data += chunk
            else:
                too_large += len(chunk)
            if n_calls and chunk and len(lines) <= cap:
                on_lines(chunk)
        if n_calls and not calls and cur is None and spec.get("start_s") and cw is not None \
                and time.monotonic() - t_start > spec["start_s"]:
            call_timeout = (f"the start (interpreter, imports, the code's top level) reached its time limit of "
                            f"{spec['start_s']:g} s (the supervisor's clock); the run was ended")
            stop_run()
        if cur is not None and time.monotonic() - t_call > float(spec["seconds"]):
            call_timeout = (f"call {cur} reached its time limit of {float(spec['seconds']):g} s (the supervisor's "
                            f"clock); the run was ended")
            calls.append({"status": "timeout", "reason": call_timeout, "seconds": time.monotonic() - t_call,
                          "value": None})
            cur = None
            stop_run()  # the call's process and the worker
        while exited is None:  # the worker's end, and every other child's: as the namespace's init (or the
            # fallback's subreaper) this process inherits the run's orphans and siblings (CLONE_PARENT); each
            # is reaped when it ends, not left a zombie to the run's end (a zombie's memory cgroup reads "/")
            try:
                got = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if not got[0]:
                break
            if got[0] == pid:
                exited = got
    while not eof:  # what the worker wrote before it exited (a child of it may hold the pipe: no blocking)
        ready, _, _ = select.select([pr], [], [], 0)
        if not ready:
            break
        chunk = os.read(pr, 65536)
        if not chunk:
            break
        if len(data) <= cap:
            data += chunk
        if n_calls and len(lines) <= cap:
            on_lines(chunk)
    while notify_fd is not None:  # a denied call still pending (a child of the worker): it fails the run too
        ready, _, _ = select.select([notify_fd], [], [], 0)
        if not ready:
            break
        n = len(denied)
        on_denial()
        if len(denied) == n:
            break
    _, status, ru = exited
    # the rest of the run (children the worker left, in any session): killed and reaped here, so that nothing of
    # it outlives the report and their CPU time is counted (RUSAGE_CHILDREN: every process of the run this
    # supervisor reaped, itself or through the worker, with the worker's own)
    left = _end_run(payload["mode"], None)
    ru_all = resource.getrusage(resource.RUSAGE_CHILDREN)
    setup_failed = b""
    while len(setup_failed) < 4096:  # the worker has exited and closed its end: EOF comes at once
        ready, _, _ = select.select([sr], [], [], 0)
        chunk = os.read(sr, 4096) if ready else b""
        if not chunk:
            break
        setup_failed += chunk
    if setup_failed:  # the worker's confinement failed: the code never ran
        os.write(rfd, _report_line(b"S", {"setup_error": setup_failed.decode("utf-8", "replace")[:500],
                                           "setup": setup}))
        return
    final, notes, problem = _parse_report(bytes(data), cap)
    if final is not None:  # the program's own text: bounded here, so the line below has a known size
        final = {"final": final["final"], "reason": final["reason"][:2000],
                 "value": None if final["value"] is None else final["value"][:cap]}
    report = {"setup": setup, "exit": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
              "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
              "cpu": ru.ru_utime + ru.ru_stime, "cpu_all": ru_all.ru_utime + ru_all.ru_stime, "left": left,
              "maxrss_kb": ru.ru_maxrss, "denied": denied,
              "final": final, "notes": notes, "problem": problem}
    if n_calls:
        report.update(calls=calls, call_timeout=call_timeout, start_error=start_error)
    line = _report_line(b"S", report)
    limit = int(payload.get("report_max") or 0)
    if limit and len(line) > limit:  # never more than the host reads: its cut once lost a SIGSYS seen here
        report.update(final=None, notes=[], problem=f"report too large: the program's report came to "
                                                    f"{len(line)} bytes here, more than the {limit} the host reads")
        line = _report_line(b"S", report)
    os.write(rfd, line)


if __name__ == "__main__":
    try:
        _supervise(int(sys.argv[1]), sys.argv[2])
    finally:
        import os as _os
        _os._exit(0)  # as PID 1 of the namespace: everything left in it is killed now
