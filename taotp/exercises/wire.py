"""What crosses between the kernel, the judge and the worker (see ``judge``), and how.

The worker is untrusted: it sends values ``encode``d as a tree of tagged tuples of
Python's own scalars, strings and bytes, which the judge unpickles with no globals at all
(``loads``) and rebuilds with a node budget (``decode``).  Callables arrive as ``Remote``
handles that call back into the worker; other objects as ``Opaque`` (a wrong type).
"""
import io
import pickle
import reprlib
import struct

import numpy as np

MAX_FRAME = 512 << 20           # bytes in one message (a few programs of 2**24 numbers)
MAX_ELEMENTS = 1 << 24          # numbers in one array a worker may send back
MAX_NODES = 1 << 20             # values in one reply (lists, dicts, scalars, arrays)
MAX_DEPTH = 64
ARRAY_KINDS = 'biufcUS'         # bool, integers, floats, complex, text: never objects

_HEADER = struct.Struct('!Q')


class WireError(Exception):
    """A message that breaks the protocol (too large, malformed, or the peer is gone)."""


# ----------------------------------------------------------------------------- framing

def send(sock, message):
    """Pickle ``message`` (trusted senders only) and send it as one frame."""
    send_bytes(sock, pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))


def send_bytes(sock, data):
    if len(data) > MAX_FRAME:
        raise WireError(f'message of {len(data):,} bytes; at most {MAX_FRAME:,} allowed')
    header = _HEADER.pack(len(data))
    if len(data) < 1 << 16:
        sock.sendall(header + data)
    else:
        sock.sendall(header)
        sock.sendall(data)


def recv_bytes(sock):
    """One frame's bytes; ``WireError`` when the peer closed or sent an oversized frame."""
    (size,) = _HEADER.unpack(_exactly(sock, _HEADER.size))
    if size > MAX_FRAME:
        raise WireError(f'a frame of {size:,} bytes; at most {MAX_FRAME:,} allowed')
    return _exactly(sock, size)


def _exactly(sock, n):
    chunks, left = [], n
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise WireError('the other process closed the connection')
        chunks.append(chunk)
        left -= len(chunk)
    return b''.join(chunks)


def recv_trusted(sock):
    """A frame from a trusted sender (the kernel or the judge), unpickled."""
    return pickle.loads(recv_bytes(sock))


class _NoGlobals(pickle.Unpickler):
    def find_class(self, module, name):
        raise WireError(f'a worker message names {module}.{name}; only plain data may cross')


def loads(data):
    """Unpickle bytes from an untrusted sender: builtin scalars, str, bytes, tuples, lists
    and dicts only (no class can be named, so nothing can run)."""
    try:
        return _NoGlobals(io.BytesIO(data)).load()
    except WireError:
        raise
    except Exception as exc:
        raise WireError(f'unreadable worker message ({type(exc).__name__}: {exc})') from None


# ----------------------------------------------------------------------------- values

class Remote:
    """A callable of the answer, living in the worker (``name``: its ``__qualname__``);
    checkers call it through ``toolkit.call``."""

    def __init__(self, ref, name, session=None):
        self.ref, self.name, self.session = ref, name, session

    def __call__(self, *args, **kwargs):
        return self.session.call(self, args, kwargs)

    def __repr__(self):
        return f'<your function {self.name}>'


class Opaque:
    """An object that is neither data nor callable (e.g. a custom class instance)."""

    def __init__(self, type_name, text):
        self.type_name, self.text = type_name, text

    def __repr__(self):
        return f'<{self.type_name} object>'


def encode(value, callables, _state=None, _depth=0):
    """``value`` as a tree of tagged tuples, run in the worker (reading a value may run the
    answer's code): array-likes become plain arrays, containers keep their kind, callables
    are registered in ``callables`` and sent as a reference."""
    state = _state if _state is not None else {'nodes': 0}
    state['nodes'] += 1
    if state['nodes'] > MAX_NODES or _depth > MAX_DEPTH:
        raise WireError(f'the value holds more than {MAX_NODES:,} items or nests deeper than '
                        f'{MAX_DEPTH} levels')
    if value is None or type(value) in (bool, int, float, complex, str, bytes):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, bytes):
        return bytes(memoryview(value))
    if isinstance(value, np.ndarray) or (hasattr(type(value), '__array__')
                                         and not callable(value)):
        return _encode_array(value, callables, state, _depth)
    if isinstance(value, (list, tuple)):
        tag = 'T' if isinstance(value, tuple) else 'L'
        return (tag, [encode(v, callables, state, _depth + 1) for v in list(value)])
    if isinstance(value, dict):
        return ('D', [(encode(k, callables, state, _depth + 1), encode(v, callables, state,
                                                                       _depth + 1))
                      for k, v in list(dict(value).items())])
    if isinstance(value, (set, frozenset)):
        return ('S', [encode(v, callables, state, _depth + 1) for v in list(value)])
    if callable(value):
        callables.append(value)
        name = getattr(value, '__qualname__', None) or type(value).__name__
        return ('F', len(callables) - 1, str(name)[:80])
    return ('O', type(value).__name__[:80], reprlib.repr(value)[:200])


def _encode_array(value, callables, state, depth):
    if hasattr(value, 'detach') and hasattr(value, 'cpu'):      # a torch tensor
        value = value.detach().cpu().numpy()
    arr = np.array(value, subok=False)
    if arr.size > MAX_ELEMENTS:
        raise WireError(f'an array of shape {arr.shape} ({arr.size:,} numbers); at most '
                        f'{MAX_ELEMENTS:,} numbers per array')
    if arr.dtype.kind == 'O':
        return encode(arr.tolist(), callables, state, depth + 1)
    if arr.dtype.kind not in ARRAY_KINDS:
        return ('O', f'ndarray of {arr.dtype}', reprlib.repr(arr)[:200])
    arr = np.ascontiguousarray(arr)
    state['nodes'] += arr.size // 4096       # large arrays count towards the budget too
    return ('A', arr.dtype.str, tuple(int(n) for n in arr.shape), arr.tobytes())


def decode(tree, session=None):
    """Rebuild plain values from ``encode``'s tree (run in the judge on untrusted input)."""
    state = {'nodes': 0}

    def build(node, depth):
        state['nodes'] += 1
        if state['nodes'] > MAX_NODES or depth > MAX_DEPTH:
            raise WireError(f'a reply with more than {MAX_NODES:,} values or deeper than '
                            f'{MAX_DEPTH} levels')
        if node is None or type(node) in (bool, int, float, complex, str, bytes):
            return node
        if type(node) is not tuple or not node or not isinstance(node[0], str):
            raise WireError(f'malformed reply item of type {type(node).__name__}')
        tag, body = node[0], node[1:]
        if tag in 'LTS' and len(body) == 1 and type(body[0]) is list:
            items = [build(v, depth + 1) for v in body[0]]
            if tag == 'S':
                try:
                    return frozenset(items)
                except TypeError:
                    raise WireError('a set of unhashable values') from None
            return items if tag == 'L' else tuple(items)
        if tag == 'D' and len(body) == 1 and type(body[0]) is list:
            out = {}
            for pair in body[0]:
                if type(pair) is not tuple or len(pair) != 2:
                    raise WireError('malformed dict item')
                key = build(pair[0], depth + 1)
                try:
                    out[key] = build(pair[1], depth + 1)
                except TypeError:
                    raise WireError('a dict with an unhashable key') from None
            return out
        if tag == 'A' and len(body) == 3:
            return _decode_array(*body, state)
        if tag == 'F' and len(body) == 2 and type(body[0]) is int and type(body[1]) is str:
            return Remote(body[0], body[1], session)
        if tag == 'O' and len(body) == 2 and all(type(b) is str for b in body):
            return Opaque(*body)
        raise WireError(f'malformed reply item {tag!r}')

    return build(tree, 0)


def _decode_array(dtype, shape, raw, state):
    if type(dtype) is not str or type(shape) is not tuple or type(raw) is not bytes \
            or not all(type(n) is int and n >= 0 for n in shape):
        raise WireError('malformed array in a reply')
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise WireError(f'unknown dtype {dtype!r} in a reply') from None
    size = int(np.prod(shape, dtype=object)) if shape else 1
    if dt.kind not in ARRAY_KINDS or dt.fields is not None or size > MAX_ELEMENTS \
            or size * dt.itemsize != len(raw):
        raise WireError(f'a malformed or oversized array in a reply ({dtype}, {shape})')
    state['nodes'] += size // 4096
    return np.frombuffer(raw, dtype=dt).reshape(shape).copy()
