"""The operating system's walls around a worker (Linux on x86-64: Colab, CI, most laptops).

The worker's audit hook (``hook``) is Python in the answer's own process; a seccomp
filter is the kernel's.  Installed before the answer is unpickled, it makes the kernel
refuse starting programs or processes (a ``clone`` that is not a thread; ``clone3`` says
"not implemented", so the C library falls back to ``clone``), new signal handlers (one
would run an answer's code wherever the main thread is, inside the hook too), signalling
or inspecting other processes, writing, creating, linking, renaming or removing files, new sockets,
``io_uring`` (which seccomp cannot see) and raising resource limits; where the kernel has
Landlock (5.13 and later), the package's code files cannot be read either, so code an
answer switched back on cannot come from disk.  The worker also drops every capability
and the judge marks itself not dumpable (``protect_self``), so no process of the same
user can read the hidden cases.  Elsewhere only the audit hook and the resource limits
apply; ``install()`` says which.
"""
import ctypes
import ctypes.util
import errno
import functools
import os
import platform
import struct

_X86_64 = {
    'deny': dict(rt_sigaction=13, execve=59, execveat=322, fork=57, vfork=58, ptrace=101,
                 kill=62, tkill=200, tgkill=234, pidfd_open=434, pidfd_getfd=438,
                 pidfd_send_signal=424, process_vm_readv=310, process_vm_writev=311,
                 rt_sigqueueinfo=129,
                 rt_tgsigqueueinfo=297, socket=41, socketpair=53, creat=85, link=86,
                 linkat=265, symlink=88, symlinkat=266, rename=82, renameat=264,
                 renameat2=316, unlink=87, unlinkat=263, truncate=76, mkdir=83, mkdirat=258,
                 rmdir=84, mknod=133, mknodat=259, chmod=90, fchmodat=268, chown=92,
                 lchown=94, fchownat=260, open_by_handle_at=304, setrlimit=160,
                 prlimit64=302, io_uring_setup=425, io_uring_enter=426,
                 io_uring_register=427, setns=308, unshare=272, mount=165, bpf=321,
                 userfaultfd=323, perf_event_open=298, fchmod=91, fchown=93, utime=132,
                 utimes=235, futimesat=261, utimensat=280, setxattr=188, lsetxattr=189,
                 fsetxattr=190, removexattr=197, lremovexattr=198, fremovexattr=199,
                 name_to_handle_at=303, open_tree=428, move_mount=429, fsopen=430,
                 fsconfig=431, fsmount=432, fspick=433, mount_setattr=442, fchmodat2=452,
                 setxattrat=463, removexattrat=466),
    'not_implemented': dict(clone3=435, openat2=437),
    'clone': 56, 'open': 2, 'openat': 257, 'capset': 126, 'arch': 0xC000003E,
    'landlock': (444, 445, 446),            # create_ruleset, add_rule, restrict_self
}
_CLONE_THREAD = 0x10000
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _PR_SET_DUMPABLE, _SECCOMP_MODE_FILTER = 38, 22, 4, 2


@functools.lru_cache(maxsize=None)
def _table():
    if platform.system() == 'Linux' and platform.machine() in ('x86_64', 'AMD64'):
        return _X86_64
    return None


@functools.lru_cache(maxsize=None)
def _program():
    """The filter as BPF instructions; jumps name labels, resolved at the end."""
    table = _table()
    ops = [(_LD_ABS, 0, 0, 4), (_JEQ, 0, 'deny', table['arch']), (_LD_ABS, 0, 0, 0),
           (_JGE, 'deny', 0, 0x40000000)]                       # x32 system calls
    ops += [(_JEQ, 'deny', 0, nr) for nr in table['deny'].values()]
    ops += [(_JEQ, 'enosys', 0, nr) for nr in table['not_implemented'].values()]
    ops += [(_JEQ, 'clone', 0, table['clone']), (_JEQ, 'openat', 0, table['openat']),
            (_JEQ, 'open', 0, table['open']), (_RET, 0, 0, _ALLOW)]
    labels = {}

    def label(name, *body):
        labels[name] = len(ops)
        ops.extend(body)

    # seccomp_data: nr at 0, arch at 4, ip at 8, args[i] at 16 + 8 i (low word first)
    label('clone', (_LD_ABS, 0, 0, 16), (_JSET, 'allow', 'deny', _CLONE_THREAD))
    label('openat', (_LD_ABS, 0, 0, 32), (_JSET, 'deny', 'allow', _WRITE_FLAGS))
    label('open', (_LD_ABS, 0, 0, 24), (_JSET, 'deny', 'allow', _WRITE_FLAGS))
    label('allow', (_RET, 0, 0, _ALLOW))
    label('deny', (_RET, 0, 0, _ERRNO | errno.EPERM))
    label('enosys', (_RET, 0, 0, _ERRNO | errno.ENOSYS))
    out = []
    for i, (code, jt, jf, k) in enumerate(ops):
        jt = labels[jt] - i - 1 if isinstance(jt, str) else jt
        jf = labels[jf] - i - 1 if isinstance(jf, str) else jf
        out.append(struct.pack('=HBBI', code, jt, jf, k))
    return b''.join(out), len(out)


@functools.lru_cache(maxsize=None)
def _libc():
    return ctypes.CDLL(ctypes.util.find_library('c') or 'libc.so.6', use_errno=True)


def protect_self():
    """Make this process not dumpable: only a process with CAP_SYS_PTRACE may read it."""
    if platform.system() == 'Linux':
        try:
            _libc().prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
        except (OSError, AttributeError):
            pass


_READ_FILE, _PATH_BENEATH = 1 << 2, 1      # Landlock's LANDLOCK_ACCESS_FS_READ_FILE, rule type
_HIDDEN = []                                 # what no answer may read: set by prepare(hidden)


def _readable(hidden):
    """The paths that cover every file except ``hidden`` (real paths): each entry of the
    folders on the way to a hidden file, except those folders and the hidden files."""
    on_the_way = {os.path.dirname(path) for path in hidden}
    for folder in list(on_the_way):
        while folder != os.path.dirname(folder):
            folder = os.path.dirname(folder)
            on_the_way.add(folder)
    keep = []
    for folder in sorted(on_the_way):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        keep += [path for path in (os.path.join(folder, n) for n in names)
                 if path not in on_the_way and path not in hidden]
    return keep


def prepare(hidden=()):
    """Everything ``install`` needs that takes time (finding the C library runs a program,
    the filter is assembled in Python), done once in the zygote before it forks;
    ``hidden``: files no answer may read (the package's code)."""
    if _table() is not None:
        _libc()
        _program()
        _HIDDEN[:] = [frozenset(hidden)]


def _hide(libc, table):
    """Landlock (Linux 5.13 and later): the hidden files can no longer be read, whatever an
    answer does in its own process; False where the kernel has no Landlock.  The folders
    are listed for each worker, so files made since the zygote started stay readable."""
    create, add_rule, restrict = table['landlock']
    ruleset = libc.syscall(create, ctypes.c_char_p(struct.pack('=Q', _READ_FILE)), 8, 0)
    if ruleset < 0:
        return False
    try:
        for path in _readable(_HIDDEN[0]):
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            rule = struct.pack('=Qi', _READ_FILE, fd)
            libc.syscall(add_rule, ruleset, _PATH_BENEATH, ctypes.c_char_p(rule), 0)
            os.close(fd)
        if libc.syscall(restrict, ruleset, 0) != 0:
            raise OSError(ctypes.get_errno(), 'landlock_restrict_self failed')
    finally:
        os.close(ruleset)
    return True


def install():
    """Drop capabilities and install the filter; returns True when the walls stand."""
    table = _table()
    if table is None:
        return False
    libc = _libc()
    header = struct.pack('=Ii', 0x20080522, 0)                   # capability version 3, self
    data = ctypes.create_string_buffer(24)                       # two zeroed sets
    if libc.syscall(table['capset'], ctypes.c_char_p(header), data) != 0:
        raise OSError(ctypes.get_errno(), 'capset failed')
    code, length = _program()
    filters = ctypes.create_string_buffer(code, len(code))
    fprog = struct.pack('=HxxxxxxQ', length, ctypes.addressof(filters))
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), 'no_new_privs failed')
    if _HIDDEN:
        _hide(libc, table)
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.c_char_p(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), 'installing the seccomp filter failed')
    return True
