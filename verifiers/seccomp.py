"""A seccomp deny-list for sandboxed code, built with libseccomp through ctypes (no new dependency).

    filt = build(kill=True)      # -> Filter, or raises SeccompUnavailable (no libseccomp, unknown arch)
    filt.load()                  # in the process to confine; irreversible, inherited by its children
    filt = build(notify=True)    # denied calls are held and reported to the loading process instead:
    filt.load(); fd = filt.notify_fd;  filt.receive() -> (pid, syscall name) or None

Why libseccomp and a deny-list: libseccomp (libseccomp.so.2, present on Debian/Ubuntu machines and
in most Python images because systemd and util-linux link it) resolves syscall names for the
running architecture and writes the architecture check and the x32 ABI check into the BPF program,
so the list below stays a list of names. A deny-list (default allow) keeps NumPy/SciPy, threads
and ordinary file I/O working without tuning an allow-list per library version; the kernel
namespaces (verifiers/sandbox_runner.py) are what confine files, network and processes, and the
filter removes the kernel interfaces that would undo or get around them.

What is denied. With `notify=True` (the sandbox's supervisor) a denied call is not run: the calling
thread is held and the kernel sends a notification (pid, syscall number) on a listener fd that only
the process that loaded the filter holds; the supervisor records it and kills the run. That record is
the kernel's word: a program cannot forge it (a SIGSYS it raises itself, or a forked child's denied
call that the killed-by-SIGSYS status of the worker would not show). `kill=True` (the default
without notify) kills the process with SIGSYS; `kill=False` returns EPERM:
  - special files: mknod, mknodat (device nodes, FIFOs);
  - debugging other processes: ptrace, process_vm_readv/writev, kcmp;
  - mounts and root changes: mount, umount2, pivot_root, chroot, the new mount API (fsopen,
    fsconfig, fsmount, fspick, move_mount, open_tree, mount_setattr);
  - kernel keyrings: keyctl, add_key, request_key;
  - a seccomp filter of the run's own: seccomp, prctl(PR_SET_SECCOMP) (its ERRNO action would outrank
    the notification and hide the denied calls from the record);
  - namespaces: unshare, setns, clone with any CLONE_NEW* flag; clone3 gets ENOSYS (its flags
    are in memory a filter cannot read; glibc then falls back to clone, which is checked);
  - the kernel itself: kexec_load, kexec_file_load, init_module, finit_module, delete_module,
    bpf, perf_event_open, userfaultfd, io_uring_* (io_uring requests bypass seccomp), reboot,
    swapon/swapoff, acct, syslog, quotactl, open_by_handle_at, name_to_handle_at, iopl, ioperm,
    the clocks (settimeofday, clock_settime, clock_adjtime, adjtimex), sethostname, setdomainname,
    vhangup, uselib, lookup_dcookie, fanotify_init, modify_ldt (x86 LDT: a classic exploit path),
    quotactl_fd;
  - memfd_create, memfd_secret: ENOSYS (memory outside RLIMIT_AS and outside the scratch tmpfs' size);
  - host-wide resources: io_setup ENOSYS (AIO contexts count against the host's fs.aio-max-nr),
    inotify_init/inotify_init1 ENOSYS (watches on the read-only binds see the host's file events),
    flock and the fcntl lock/lease/notify commands ENOLCK/EPERM (a lock on a bound host file is a
    lock on the host's file), fcntl(F_SETPIPE_SZ) EPERM, page-cache eviction of shared files
    (posix_fadvise DONTNEED/NOREUSE, madvise MADV_COLD/MADV_PAGEOUT: a timing channel between runs) EPERM,
    setsockopt(SOL_SOCKET, SO_SNDBUF/SO_RCVBUF
    [/FORCE]) EPERM (socket buffers stay at the kernel's default size), host-global counters and figures:
    getsockopt(SO_COOKIE/SO_NETNS_COOKIE) ENOPROTOOPT, sysinfo ENOSYS (the host's process count, loads,
    free memory), pidfd_open, eventfd, eventfd2, statfs, fstatfs ENOSYS and clone(CLONE_PIDFD) EPERM (pidfs
    inode numbers, eventfd ids, the host disk's free space);
  - path Unix sockets: socket(AF_UNIX) EAFNOSUPPORT and socketpair other than SOCK_STREAM EPERM: a
    socket file inside a read-only bind (a host socket) accepts connections from any AF_UNIX socket,
    and a datagram socket can send to a path; a stream socketpair (multiprocessing, asyncio) has no
    address and cannot reach one;
  - socket families other than AF_UNIX, AF_INET, AF_INET6: EAFNOSUPPORT (not a kill: a library that
    probes for netlink gets an ordinary error). AF_VSOCK is not confined by the network namespace
    (on a VM it reaches the hypervisor's host); netlink, packet, AF_ALG, bluetooth, XDP, ... are
    kernel surface the code never needs.
Syscalls from another ABI (i386 `int 0x80`, x32) fail the architecture check: in the notify mode they are
reported and refused like a denied call (named with their ABI), else they kill the process (libseccomp's
default bad-arch action). sync and syncfs get EPERM (writeback of the host's dirty data).
"""
from __future__ import annotations

import ctypes
import errno
import os

SCMP_ACT_KILL_PROCESS = 0x80000000
SCMP_ACT_KILL_THREAD = 0x00000000
SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_ACT_NOTIFY = 0x7FC00000
SCMP_CMP_GT = 6
SCMP_CMP_MASKED_EQ = 7


def SCMP_ACT_ERRNO(e: int) -> int:
    return 0x00050000 | (e & 0x0000FFFF)


DENIED = (
    "mknod", "mknodat",
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
    "mount", "umount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick",
    "move_mount", "open_tree", "mount_setattr",
    "keyctl", "add_key", "request_key",
    "unshare", "setns",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "bpf",
    "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register", "reboot",
    "swapon", "swapoff", "acct", "syslog", "quotactl", "open_by_handle_at", "name_to_handle_at", "iopl",
    "ioperm", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname",
    "vhangup", "uselib", "lookup_dcookie", "fanotify_init", "nfsservctl",
    "modify_ldt", "quotactl_fd",  # kernel surface no Python program needs (Docker's default profile drops them too)
    # a filter of the run's own: its ERRNO action outranks this filter's user notification, so the calls
    # denied here would fail quietly and go unrecorded (prctl(PR_SET_SECCOMP) is denied by argument below)
    "seccomp",
)
PR_SET_SECCOMP = 22
# page-cache eviction of files the run shares with the host (a timing channel between runs, and the host's
# own cache emptied): posix_fadvise DONTNEED / NOREUSE (arg 3) and madvise MADV_COLD / MADV_PAGEOUT (arg 2)
FADVISE_EVICT, MADVISE_EVICT = (4, 5), (20, 21)
# socket(2) families allowed: AF_UNIX, AF_INET, AF_INET6. Every other family gets EAFNOSUPPORT, as if the
# kernel lacked it: some are not confined by the network namespace at all (AF_VSOCK reaches the
# hypervisor's host on VMs, e.g. Firecracker/QEMU guests), the rest (AF_NETLINK, AF_PACKET, AF_ALG,
# AF_BLUETOOTH, AF_XDP, AF_KCM, AF_TIPC, AF_RDS ...) are kernel attack surface a program never needs.
SOCKET_FAMILIES_ALLOWED = (1, 2, 10)
# CLONE_NEWTIME, CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET
CLONE_PIDFD = 0x1000
CLONE_NEW_FLAGS = (0x80, 0x20000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)


# fcntl commands that reach beyond the process: record locks (F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW), leases
# (F_SETLEASE) and directory notification (F_NOTIFY): on a bound host file they lock or watch the host's inode
FCNTL_LOCKS = (6, 7, 37, 38)
FCNTL_OTHER = (1024, 1026, 1031)  # F_SETLEASE, F_NOTIFY, F_SETPIPE_SZ
SCMP_FLTATR_ACT_BADARCH = 2  # libseccomp's enum scmp_filter_attr
X32_SYSCALL_BIT = 0x40000000
AUDIT_ARCH_X86_64, AUDIT_ARCH_I386, AUDIT_ARCH_AARCH64, AUDIT_ARCH_ARM = 0xC000003E, 0x40000003, 0xC00000B7, 0x40000028
NATIVE_ARCH = {"x86_64": AUDIT_ARCH_X86_64, "aarch64": AUDIT_ARCH_AARCH64}
FOREIGN_ARCH = {AUDIT_ARCH_I386: "i386", AUDIT_ARCH_ARM: "arm"}
SOL_SOCKET, SOCKET_BUFFERS = 1, (7, 8, 32, 33)  # SO_SNDBUF, SO_RCVBUF, SO_SNDBUFFORCE, SO_RCVBUFFORCE
SOCKET_COOKIES = (57, 71)  # SO_COOKIE, SO_NETNS_COOKIE: values of host-global counters


class _Data(ctypes.Structure):  # struct seccomp_data
    _fields_ = [("nr", ctypes.c_int), ("arch", ctypes.c_uint32), ("ip", ctypes.c_uint64),
                ("args", ctypes.c_uint64 * 6)]


class _Notif(ctypes.Structure):  # struct seccomp_notif (the kernel's may be larger; libseccomp allocates it)
    _fields_ = [("id", ctypes.c_uint64), ("pid", ctypes.c_uint32), ("flags", ctypes.c_uint32), ("data", _Data)]


class SeccompUnavailable(RuntimeError):
    """libseccomp is missing or refused the filter: the caller decides what that means (and says so)."""


class _ArgCmp(ctypes.Structure):  # struct scmp_arg_cmp
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


def _lib():
    try:  # the soname directly: ctypes.util.find_library would start ldconfig/gcc subprocesses
        lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    except OSError as e:
        raise SeccompUnavailable(f"libseccomp could not be loaded (libseccomp.so.2): {e}") from e
    lib.seccomp_init.argtypes, lib.seccomp_init.restype = [ctypes.c_uint32], ctypes.c_void_p
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_ArgCmp)]
    lib.seccomp_rule_add_array.restype = ctypes.c_int
    lib.seccomp_syscall_resolve_name.argtypes, lib.seccomp_syscall_resolve_name.restype = [ctypes.c_char_p], ctypes.c_int
    lib.seccomp_load.argtypes, lib.seccomp_load.restype = [ctypes.c_void_p], ctypes.c_int
    lib.seccomp_release.argtypes, lib.seccomp_release.restype = [ctypes.c_void_p], None
    try:
        lib.seccomp_notify_fd.argtypes, lib.seccomp_notify_fd.restype = [ctypes.c_void_p], ctypes.c_int
        lib.seccomp_notify_alloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p)]
        lib.seccomp_notify_receive.argtypes = [ctypes.c_int, ctypes.c_void_p]
        lib.seccomp_syscall_resolve_num_arch.argtypes = [ctypes.c_uint32, ctypes.c_int]
        lib.seccomp_syscall_resolve_num_arch.restype = ctypes.c_void_p
    except AttributeError:  # libseccomp older than 2.5: no user notification
        pass
    return lib


class Filter:
    """A built (not yet loaded) filter. `load()` applies it to the calling process (and its future children)."""

    def __init__(self, lib, ctx, denied, notify=False):
        self._lib, self._ctx, self.denied, self.notify = lib, ctx, denied, notify
        self.notify_fd = None  # with notify: the listener fd, set by load()
        self._req = None

    def load(self) -> None:
        if self.notify:  # before the load: libseccomp's first alloc asks seccomp() itself, denied once loaded
            req, resp = ctypes.c_void_p(), ctypes.c_void_p()
            if self._lib.seccomp_notify_alloc(ctypes.byref(req), ctypes.byref(resp)) != 0:
                raise SeccompUnavailable("seccomp_notify_alloc failed")
            self._req = req
        rc = self._lib.seccomp_load(self._ctx)
        if rc != 0:
            raise SeccompUnavailable(f"seccomp_load failed: {errno.errorcode.get(-rc, rc)}")
        if self.notify:
            fd = self._lib.seccomp_notify_fd(self._ctx)
            if fd < 0:
                raise SeccompUnavailable(f"seccomp_notify_fd failed: {errno.errorcode.get(-fd, fd)}")
            self.notify_fd = fd

    def receive(self):
        """One pending notification from the listener: (pid in the loader's PID namespace, syscall name),
        or None (none pending any more: the caller died). Call it when notify_fd is readable."""
        if self._req is None or self._lib.seccomp_notify_receive(self.notify_fd, self._req) != 0:
            return None
        n = ctypes.cast(self._req, ctypes.POINTER(_Notif)).contents
        nr, arch = n.data.nr, n.data.arch
        abi = ("x32" if nr & X32_SYSCALL_BIT else None) if arch == NATIVE_ARCH.get(os.uname().machine) else \
            FOREIGN_ARCH.get(arch, f"arch {arch:#x}")
        name = self._lib.seccomp_syscall_resolve_num_arch(arch, nr) if abi is None or abi == "i386" else None
        text = ctypes.string_at(name).decode("ascii", "replace") if name else f"syscall {nr & ~X32_SYSCALL_BIT}"
        return int(n.pid), text + (f" ({abi})" if abi else "")


def build(kill: bool = True, notify: bool = False) -> Filter:
    """The deny-list filter (see the module docstring). Raises SeccompUnavailable, never anything else."""
    lib = _lib()
    if notify and not hasattr(lib.seccomp_notify_receive, "argtypes"):
        raise SeccompUnavailable("libseccomp has no user notification (2.5 or newer needed)")
    ctx = lib.seccomp_init(SCMP_ACT_ALLOW)
    if not ctx:
        raise SeccompUnavailable("seccomp_init failed")
    deny = SCMP_ACT_NOTIFY if notify else SCMP_ACT_KILL_PROCESS if kill else SCMP_ACT_ERRNO(errno.EPERM)
    denied = []
    if notify:  # a call of another ABI (i386 int 0x80, x32) is reported too: its default, a silent kill of the
        # process, left a run whose children died that way `ok` with nothing recorded (held-out sandbox round 6)
        lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
        lib.seccomp_attr_set.restype = ctypes.c_int
        rc = lib.seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_NOTIFY)
        if rc != 0:
            raise SeccompUnavailable(f"seccomp_attr_set(ACT_BADARCH, NOTIFY) failed: {errno.errorcode.get(-rc, rc)}")
        denied.append("calls of another ABI (i386, x32)")

    def add(action, name, conds=()):
        nr = lib.seccomp_syscall_resolve_name(name.encode())
        if nr < 0:  # not a syscall on this architecture (e.g. umount, uselib on aarch64)
            return False
        arr = (_ArgCmp * max(1, len(conds)))(*conds) if conds else None
        rc = lib.seccomp_rule_add_array(ctx, action, nr, len(conds), arr)
        if rc != 0 and action == SCMP_ACT_KILL_PROCESS:  # a kernel older than 4.14: kill the thread
            rc = lib.seccomp_rule_add_array(ctx, SCMP_ACT_KILL_THREAD, nr, len(conds), arr)
        if rc != 0:
            raise SeccompUnavailable(f"seccomp_rule_add({name}) failed: {errno.errorcode.get(-rc, rc)}")
        return True

    for name in DENIED:
        if add(deny, name):
            denied.append(name)
    # writeback of the host's dirty data (every file system, or the one of a bound file): work for the host's
    # disks that the run cannot see and no limit counts (held-out sandbox round 6)
    for name in ("sync", "syncfs"):
        if add(SCMP_ACT_ERRNO(errno.EPERM), name):
            denied.append(f"{name} (EPERM)")
    add(deny, "prctl", (_ArgCmp(0, SCMP_CMP_MASKED_EQ, 0xFFFFFFFF, PR_SET_SECCOMP),))
    denied.append("prctl(PR_SET_SECCOMP)")
    for advice in FADVISE_EVICT:
        add(SCMP_ACT_ERRNO(errno.EPERM), "fadvise64", (_ArgCmp(3, SCMP_CMP_MASKED_EQ, 0xFFFFFFFF, advice),))
    for advice in MADVISE_EVICT:
        add(SCMP_ACT_ERRNO(errno.EPERM), "madvise", (_ArgCmp(2, SCMP_CMP_MASKED_EQ, 0xFFFFFFFF, advice),))
    denied.append("fadvise64(DONTNEED/NOREUSE), madvise(MADV_COLD/MADV_PAGEOUT) (EPERM)")
    for flag in CLONE_NEW_FLAGS:  # clone(flags, ...): arg 0 holds the flags on x86_64 and aarch64
        add(deny, "clone", (_ArgCmp(0, SCMP_CMP_MASKED_EQ, flag, flag),))
    denied.append("clone(CLONE_NEW*)")
    # socket(family, ...): arg 0; families 0 and 3..9 one by one, everything above 10 in one rule (a value
    # with high bits set compares greater, so the kernel's 32-bit truncation cannot slip through)
    nosupport = SCMP_ACT_ERRNO(errno.EAFNOSUPPORT)
    for fam in [0, *range(3, 10)]:
        add(nosupport, "socket", (_ArgCmp(0, SCMP_CMP_MASKED_EQ, 0xFFFFFFFF, fam),))
    if add(nosupport, "socket", (_ArgCmp(0, SCMP_CMP_GT, 10, 0),)):
        denied.append("socket(family not AF_UNIX/AF_INET/AF_INET6) (EAFNOSUPPORT)")
    # memfd_create: ENOSYS, as on an old kernel (libffi and others then fall back to a file in $TMPDIR,
    # the scratch tmpfs). Its pages are not counted by RLIMIT_AS: 256 fds x file_size_mb of memory
    # outside memory_mb (252 MB measured at the defaults) and outside the scratch tmpfs' size.
    if add(SCMP_ACT_ERRNO(errno.ENOSYS), "memfd_create"):
        denied.append("memfd_create (ENOSYS)")
    if add(SCMP_ACT_ERRNO(errno.ENOSYS), "clone3"):
        denied.append("clone3 (ENOSYS)")
    # memory and kernel objects outside every limit, and host-wide tables (see the module docstring)
    for name in ("memfd_secret", "io_setup", "inotify_init", "inotify_init1"):
        if add(SCMP_ACT_ERRNO(errno.ENOSYS), name):
            denied.append(f"{name} (ENOSYS)")
    if add(SCMP_ACT_ERRNO(errno.ENOLCK), "flock"):
        denied.append("flock (ENOLCK)")
    for cmd in FCNTL_LOCKS + FCNTL_OTHER:
        err = errno.ENOLCK if cmd in FCNTL_LOCKS else errno.EPERM
        add(SCMP_ACT_ERRNO(err), "fcntl", (_ArgCmp(1, SCMP_CMP_MASKED_EQ, 0xFFFFFFFF, cmd),))
    denied.append("fcntl(F_SETLK/F_SETLKW/F_OFD_SETLK[W]: ENOLCK; F_SETLEASE/F_NOTIFY/F_SETPIPE_SZ: EPERM)")
    for opt in SOCKET_BUFFERS:
        add(SCMP_ACT_ERRNO(errno.EPERM), "setsockopt", (_ArgCmp(1, SCMP_CMP_MASKED_EQ, 0xFFFFFFFF, SOL_SOCKET),
                                                         _ArgCmp(2, SCMP_CMP_MASKED_EQ, 0xFFFFFFFF, opt)))
    denied.append("setsockopt(SOL_SOCKET, SO_SNDBUF/SO_RCVBUF[FORCE]) (EPERM)")
    # host-global counters a run could move and a later or concurrent run read: a socket's cookie is drawn from
    # one counter for the whole host when first asked for (held-out sandbox round 5 carried a symbol from one run
    # to the next through it); sysinfo() has the host's process count, loads and free memory (what the run's
    # /proc no longer shows)
    for opt in SOCKET_COOKIES:
        add(SCMP_ACT_ERRNO(errno.ENOPROTOOPT), "getsockopt", (_ArgCmp(1, SCMP_CMP_MASKED_EQ, 0xFFFFFFFF, SOL_SOCKET),
                                                               _ArgCmp(2, SCMP_CMP_MASKED_EQ, 0xFFFFFFFF, opt)))
    denied.append("getsockopt(SOL_SOCKET, SO_COOKIE/SO_NETNS_COOKIE) (ENOPROTOOPT)")
    if add(SCMP_ACT_ERRNO(errno.ENOSYS), "sysinfo"):
        denied.append("sysinfo (ENOSYS)")
    # more host-global counters (held-out sandbox round 7 decoded 12 of 12 bits from a concurrent run through
    # each): a pidfd's inode number is the pid allocation's host-wide 64-bit count (pidfs), an eventfd's id in
    # its fdinfo comes from one host-wide id allocator, statfs of a bound tree is the host disk's free space
    for name in ("pidfd_open", "eventfd", "eventfd2", "statfs", "fstatfs"):
        if add(SCMP_ACT_ERRNO(errno.ENOSYS), name):
            denied.append(f"{name} (ENOSYS)")
    add(SCMP_ACT_ERRNO(errno.EPERM), "clone", (_ArgCmp(0, SCMP_CMP_MASKED_EQ, CLONE_PIDFD, CLONE_PIDFD),))
    denied.append("clone(CLONE_PIDFD) (EPERM)")
    add(nosupport, "socket", (_ArgCmp(0, SCMP_CMP_MASKED_EQ, 0xFFFFFFFF, 1),))
    denied.append("socket(AF_UNIX) (EAFNOSUPPORT)")
    for typ in (0, *range(2, 16)):  # the type without SOCK_NONBLOCK/SOCK_CLOEXEC: only SOCK_STREAM (1) passes
        add(SCMP_ACT_ERRNO(errno.EPERM), "socketpair", (_ArgCmp(1, SCMP_CMP_MASKED_EQ, 0xF, typ),))
    denied.append("socketpair(not SOCK_STREAM) (EPERM)")
    return Filter(lib, ctx, tuple(denied), notify)
