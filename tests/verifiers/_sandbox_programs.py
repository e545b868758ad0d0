"""Programs shared by the sandbox attack tests (not a test module)."""

# Switches the in-process audit hook off: the hook's `_watch` frozenset (reached through the frame of a
# refusal's traceback) gets its hash table zeroed, so `event not in _watch` holds for every event.
DISARM = r'''
import ctypes as _c, struct as _st
try:
    open('/r3-disarm-probe', 'w')
except PermissionError as _e:
    _tb = _e.__traceback__
    while _tb.tb_next is not None:
        _tb = _tb.tb_next
    _w = _tb.tb_frame.f_locals['_watch']
    _b = _c.create_string_buffer(16)
    _c.memmove(_b, id(_w) + 32, 16)
    _mask, _table = _st.unpack('qQ', _b.raw)
    _c.memset(_table, 0, (_mask + 1) * 16)
except OSError:
    pass  # no hook on open: nothing to disarm
'''

# A fresh posix module (the worker's os.fork is the guards'): after DISARM, its fork is a real one.
FRESH_POSIX = r'''
import _imp as _i, importlib.machinery as _mm
posix = _i.create_builtin(_mm.ModuleSpec('posix', None))
'''

# The program's own report pipe to the supervisor (the only pipe among its fds above 2).
REPORT_FD = r'''
import os, stat
report_fd = None
for _i in range(3, 256):
    try:
        if stat.S_ISFIFO(os.fstat(_i).st_mode):
            report_fd = _i
    except OSError:
        pass
'''
