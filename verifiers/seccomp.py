"""A seccomp deny-list for sandboxed code, built with libseccomp through ctypes (no new dependency).

    filt = build(kill=True)      # -> Filter, or raises SeccompUnavailable (no libseccomp, unknown arch)
    filt.load()                  # in the process to confine; irreversible, inherited by its children

Why libseccomp and a deny-list: libseccomp (libseccomp.so.2, present on Debian/Ubuntu machines and
in most Python images because systemd and util-linux link it) resolves syscall names for the
running architecture and writes the architecture check and the x32 ABI check into the BPF program,
so the list below stays a list of names. A deny-list (default allow) keeps NumPy/SciPy, threads
and ordinary file I/O working without tuning an allow-list per library version; the kernel
namespaces (verifiers/sandbox_runner.py) are what confine files, network and processes, and the
filter removes the kernel interfaces that would undo or get around them.

What is denied (the process is killed with SIGSYS, so the supervisor sees *that* it happened and
the code cannot catch and hide it; `kill=False` returns EPERM instead):
  - special files: mknod, mknodat (device nodes, FIFOs);
  - debugging other processes: ptrace, process_vm_readv/writev, kcmp;
  - mounts and root changes: mount, umount2, pivot_root, chroot, the new mount API (fsopen,
    fsconfig, fsmount, fspick, move_mount, open_tree, mount_setattr);
  - kernel keyrings: keyctl, add_key, request_key;
  - namespaces: unshare, setns, clone with any CLONE_NEW* flag; clone3 gets ENOSYS (its flags
    are in memory a filter cannot read; glibc then falls back to clone, which is checked);
  - the kernel itself: kexec_load, kexec_file_load, init_module, finit_module, delete_module,
    bpf, perf_event_open, userfaultfd, io_uring_* (io_uring requests bypass seccomp), reboot,
    swapon/swapoff, acct, syslog, quotactl, open_by_handle_at, name_to_handle_at, iopl, ioperm,
    the clocks (settimeofday, clock_settime, clock_adjtime, adjtimex), sethostname, setdomainname,
    vhangup, uselib, lookup_dcookie, fanotify_init, modify_ldt (x86 LDT: a classic exploit path),
    quotactl_fd;
  - memfd_create: ENOSYS (its memory is outside RLIMIT_AS and outside the scratch tmpfs' size);
  - socket families other than AF_UNIX, AF_INET, AF_INET6: EAFNOSUPPORT (not a kill: a library that
    probes for netlink gets an ordinary error). AF_VSOCK is not confined by the network namespace
    (on a VM it reaches the hypervisor's host); netlink, packet, AF_ALG, bluetooth, XDP, ... are
    kernel surface the code never needs.
Syscalls from another ABI (i386 `int 0x80`, x32) fail the architecture check and kill the process
(libseccomp's default bad-arch action).
"""
from __future__ import annotations

import ctypes
import errno

SCMP_ACT_KILL_PROCESS = 0x80000000
SCMP_ACT_KILL_THREAD = 0x00000000
SCMP_ACT_ALLOW = 0x7FFF0000
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
)
# socket(2) families allowed: AF_UNIX, AF_INET, AF_INET6. Every other family gets EAFNOSUPPORT, as if the
# kernel lacked it: some are not confined by the network namespace at all (AF_VSOCK reaches the
# hypervisor's host on VMs, e.g. Firecracker/QEMU guests), the rest (AF_NETLINK, AF_PACKET, AF_ALG,
# AF_BLUETOOTH, AF_XDP, AF_KCM, AF_TIPC, AF_RDS ...) are kernel attack surface a program never needs.
SOCKET_FAMILIES_ALLOWED = (1, 2, 10)
# CLONE_NEWTIME, CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET
CLONE_NEW_FLAGS = (0x80, 0x20000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)


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
    return lib


class Filter:
    """A built (not yet loaded) filter. `load()` applies it to the calling process (and its future children)."""

    def __init__(self, lib, ctx, denied):
        self._lib, self._ctx, self.denied = lib, ctx, denied

    def load(self) -> None:
        rc = self._lib.seccomp_load(self._ctx)
        if rc != 0:
            raise SeccompUnavailable(f"seccomp_load failed: {errno.errorcode.get(-rc, rc)}")


def build(kill: bool = True) -> Filter:
    """The deny-list filter (see the module docstring). Raises SeccompUnavailable, never anything else."""
    lib = _lib()
    ctx = lib.seccomp_init(SCMP_ACT_ALLOW)
    if not ctx:
        raise SeccompUnavailable("seccomp_init failed")
    deny = SCMP_ACT_KILL_PROCESS if kill else SCMP_ACT_ERRNO(errno.EPERM)
    denied = []

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
    return Filter(lib, ctx, tuple(denied))
