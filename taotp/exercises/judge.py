"""The judge: the process that runs the checkers, where no reader's code ever runs.

``check()`` starts one judge per kernel (``python -m taotp.exercises.judge``) and sends
it each answer as cloudpickle bytes, which the judge never unpickles.  For each check the
judge refuses bytes that carry a copy of a switched-off function (``copies``), forks a
fresh worker (``worker``) that loads the answer and sends it back as plain data (a
``Remote`` for each callable), runs the checker body on that data (every call with a time
limit, the whole check within a budget), kills the worker and sends the verdict back.
Messages are read with ``wire.loads`` (no globals), so none can make the judge run code.
"""
import contextlib
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import time
import traceback
from pathlib import Path

from . import wire
from .result import Finding

_PID = struct.Struct('!q')
CALL_SECONDS = 20           # one call of the answer, at most
MEMORY_BYTES = 2 << 30      # what a worker may allocate above what it holds at the start


class WorkerTimeout(Finding):
    pass


class AnswerRaised(Finding):
    """The answer raised; ``kind`` is its exception's type name, ``frames`` where."""

    def __init__(self, kind, text, frames, detail, stage):
        self.kind, self.text, self.frames, self.stage = kind, text, frames, stage
        super().__init__(f'{kind}: {text}', detail=detail)


# ----------------------------------------------------------------------------- processes

def _spawn(role, fd):
    env = dict(os.environ, OPENBLAS_NUM_THREADS='1', OMP_NUM_THREADS='1', MKL_NUM_THREADS='1')
    return subprocess.Popen([sys.executable, '-m', 'taotp.exercises.worker', role, str(fd)],
                            pass_fds=(fd,), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                            start_new_session=True)


class Workers:
    """Fresh workers on demand: forked from a zygote, or spawned where forking fails."""

    def __init__(self):
        self.zygote = self.control = None
        self.ready = False
        self.forking = hasattr(os, 'fork') and hasattr(socket, 'send_fds') \
            and not os.environ.get('TAOTP_CHECK_SPAWN')
        if self.forking:
            self._start_zygote()

    def _start_zygote(self):
        self.control, theirs = socket.socketpair()
        self.zygote, self.ready = _spawn('zygote', theirs.fileno()), False
        theirs.close()

    def new(self):
        if self.forking:
            for _ in range(2):
                try:
                    return self._fork()
                except (OSError, wire.WireError, struct.error):
                    self.close()
                    self._start_zygote()
            self.forking = False
        ours, theirs = socket.socketpair()
        process = _spawn('spawned', theirs.fileno())
        theirs.close()
        return Worker(ours, process.pid, process)

    def _fork(self):
        self.control.settimeout(60)
        if not self.ready:
            wire._exactly(self.control, _PID.size)           # the zygote says it is ready
            self.ready = True
        ours, theirs = socket.socketpair()
        try:
            socket.send_fds(self.control, [b'F'], [theirs.fileno()])
        finally:
            theirs.close()
        (pid,) = _PID.unpack(wire._exactly(self.control, _PID.size))
        return Worker(ours, pid)

    def close(self):
        if self.zygote is not None:
            self.control.close()
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                self.zygote.kill()
                self.zygote.wait(5)
        self.zygote, self.ready = None, False


class Worker:
    def __init__(self, channel, pid, process=None):
        self.channel, self.pid, self.process, self.dead = channel, pid, process, False

    def cpu_seconds(self):
        """CPU time of the worker so far (Linux), else None: the larger of ``stat`` (every
        thread ever run, in clock ticks) and ``schedstat`` (exact, only live threads)."""
        proc, readings = Path(f'/proc/{self.pid}'), []
        with contextlib.suppress(OSError, ValueError, IndexError):
            readings.append(sum(int((task / 'schedstat').read_text().split()[0])
                                for task in (proc / 'task').iterdir()) / 1e9)
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = (proc / 'stat').read_text().rsplit(')', 1)[1].split()
            readings.append((int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK'))
        return max(readings) if readings else None

    def kill(self):
        if self.dead:
            return
        self.dead = True
        self.channel.close()
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (AttributeError, OSError):       # no os.killpg, or no such group: the process
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
        if self.process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(5)


# ----------------------------------------------------------------------------- one check

class Session:
    """One answer in one worker, for one check: ``call`` runs one of its callables within a
    time limit and the check's deadline, and records its CPU and wall time (``last_cpu``,
    ``last_wall``)."""

    def __init__(self, worker, deadline, call_seconds=CALL_SECONDS):
        self.worker, self.deadline, self.call_seconds = worker, deadline, call_seconds
        self.output, self.last_cpu, self.last_wall = [], None, None

    def load(self, answer_bytes, policy):
        wire.send(self.worker.channel, ('load', answer_bytes, policy))
        return self._receive(self.call_seconds, 'loading your answer')

    def call(self, remote, args, kwargs, seconds=None, on='', echo=False):
        """The callable's return value; with ``echo``, also the arguments as the call left
        them (``(value, args, kwargs)``), to see whether it changed its inputs in place."""
        return self.call_many(remote, [(args, kwargs)], seconds, on, echo)[0]

    def call_many(self, remote, calls, seconds=None, on='', echo=False):
        """Several calls of one callable in one message; ``seconds`` limits them all together.
        ``AnswerRaised.stage`` is the index of the call that raised."""
        if self.worker.dead:
            raise Finding('the process running your answer has already ended (an earlier call '
                          'timed out or crashed)')
        limit = min(seconds or self.call_seconds, self.call_seconds)
        cpu_before, start = self.worker.cpu_seconds(), time.perf_counter()
        try:
            wire.send(self.worker.channel, ('call', remote.ref, list(calls), echo))
        except OSError:
            self.worker.kill()
            raise Finding('the process running your answer has ended (it crashed, ran out of '
                          'memory or CPU time, or exited)') from None
        values = self._receive(limit, on)
        self.last_wall = time.perf_counter() - start
        cpu_after = self.worker.cpu_seconds()
        self.last_cpu = None if None in (cpu_before, cpu_after) else cpu_after - cpu_before
        if type(values) is not list or len(values) != len(calls):
            self.worker.kill()
            raise Finding('the process running your answer sent a malformed message')
        return values

    def _receive(self, limit, on):
        left = self.deadline - time.monotonic()
        wait = min(limit, left)
        channel = self.worker.channel
        if wait <= 0 or not select.select([channel], [], [], wait)[0]:
            self.worker.kill()
            if left <= limit:
                raise WorkerTimeout('the check\'s time budget ran out while your answer was '
                                    'running' + (f' ({on})' if on else ''))
            raise WorkerTimeout(f'took longer than {limit:g} s')
        channel.settimeout(max(5.0, limit))
        try:
            reply = wire.loads(wire.recv_bytes(channel))
        except (OSError, wire.WireError) as exc:
            self.worker.kill()
            if isinstance(exc, wire.WireError) and 'closed' not in str(exc):
                raise Finding(f'the process running your answer sent a message the check cannot '
                              f'read ({exc})') from None
            raise Finding('the process running your answer ended (it crashed, ran out of memory '
                          'or CPU time, or exited)') from None
        if type(reply) is not tuple or not reply or not isinstance(reply[-1], str):
            self.worker.kill()
            raise Finding('the process running your answer sent a malformed message')
        self.output.append(reply[-1])
        if reply[0] in ('ok', 'loaded') and len(reply) == 3:
            return wire.decode(reply[1], self)
        if reply[0] == 'raised' and len(reply) == 7:
            kind, text, frames, detail, stage = reply[1:6]
            raise AnswerRaised(str(kind), str(text), frames if type(frames) is list else [],
                               str(detail), stage if type(stage) in (int, str) else None)
        self.worker.kill()
        raise Finding('the process running your answer sent a malformed message')


# ----------------------------------------------------------------------------- the judge's loop

def _serve(channel):
    from .registry import registry, run_check
    registry()
    workers = Workers()
    try:
        while True:
            try:
                request = wire.loads(wire.recv_bytes(channel))
            except (OSError, wire.WireError):
                return
            if type(request) is not tuple or len(request) != 2 or request[0] != 'check' \
                    or type(request[1]) is not dict:
                return
            try:
                verdict = run_check(workers, **request[1])
            except BaseException as exc:      # noqa: B036 (a bug of ours, reported, not fatal)
                if isinstance(exc, KeyboardInterrupt):
                    raise
                verdict = {'passed': False, 'message': f'the checker itself failed '
                           f'({type(exc).__name__}: {exc}); please report this',
                           'detail': traceback.format_exc()}
            wire.send(channel, ('verdict', verdict))
    finally:
        workers.close()


if __name__ == '__main__':
    from . import sandbox
    sandbox.protect_self()                            # no process may read the hidden cases
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # the kernel's Ctrl-C is the kernel's
    _serve(socket.socket(fileno=int(sys.argv[1])))
