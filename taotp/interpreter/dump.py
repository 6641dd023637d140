"""Writing any program as TAOTP text that ``load_program`` reads back bit for bit.

Floats are written with ``repr``, the shortest decimal that parses back to the
same float64, so ``load_program(dump_program(p))`` equals ``p`` exactly
(``taotp.params_equal``).  The text is also valid JSON: arrays are nested
lists, one matrix row per line, keys in the order of the params format.

    >>> params = taotp.load_program('{"tok_emb": [[1, -1], [-1, 1]], "block_size": 2}')
    >>> print(dump_program(params, compact=True))
    {
        "tok_emb": [
            [1.0, -1.0],
            [-1.0, 1.0]
        ],
        "block_size": 2
    }
    <BLANKLINE>
"""
import numpy as np

from ..params import LAYER_KEYS, ParamsError, param_problems, params_equal


def _number(x):
    return repr(float(x))


def _array_lines(arr, indent):
    """An array as list-literal lines: 1-D on one line, otherwise one sub-array per line."""
    pad = ' ' * indent
    if arr.ndim == 1:
        return ['[' + ', '.join(_number(x) for x in arr) + ']']
    if arr.ndim == 2 and 0 in arr.shape:
        return ['[' + ', '.join('[]' for _ in range(arr.shape[0])) + ']']
    if arr.shape[0] == 0:
        return ['[]']
    out = ['[']
    for i, sub in enumerate(arr):
        inner = _array_lines(sub, indent + 4)
        inner[0] = pad + '    ' + inner[0]
        inner[-1] += ',' if i < len(arr) - 1 else ''
        out += inner
    out.append(pad + ']')
    return out


def _value(value, indent):
    """A field's text: a layer-norm dict on one line, a number, or an array."""
    if isinstance(value, dict):
        return '{' + ', '.join(f'"{k}": {_value(v, indent)}' for k, v in value.items()) + '}'
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim == 0:
        return _number(arr)
    return '\n'.join(_array_lines(arr, indent))


def _is_default_norm(ln):
    """gamma 1.0 and beta 0.0 exactly (a -0.0 beta is written out, to keep its bits)."""
    return set(ln) <= {'gamma', 'beta'} and all(
        np.ndim(ln[k]) == 0 and params_equal(ln[k], default)
        for k, default in (('gamma', 1.0), ('beta', 0.0)) if k in ln)


def _is_zero(value):
    """All +0.0 (a -0.0 is not: it would come back as +0.0)."""
    return params_equal(value, np.zeros(np.shape(value)))


def _layer_text(layer, compact):
    parts = []
    no_mlp = np.shape(layer['M1'])[1] == 0
    for key in LAYER_KEYS:
        value = layer[key]
        if compact and (key in ('ln1', 'ln2') and _is_default_norm(value)
                        or no_mlp and (key in ('M1', 'b1', 'M2')
                                       or key == 'b2' and _is_zero(value))):
            continue
        parts.append(f'            "{key}": {_value(value, 12)}')
    return '        {\n' + ',\n'.join(parts) + '\n        }'


def dump_program(params, compact=False):
    """Write a program as TAOTP text that ``load_program`` reads back exactly.

    Args:
        params: a valid params dict (``taotp.validate_params``).
        compact: leave out fields equal to their defaults: a tied ``out_emb``,
            default layer norms, an all-zero ``pos_emb`` (written as
            ``block_size``) and empty MLPs.

    Returns:
        The text (valid JSON too), ending with a newline.

    Raises:
        ParamsError: if ``params`` is not a valid program.
    """
    problems = param_problems(params)
    if problems:
        raise ParamsError('dump_program: ' + '; '.join(problems))
    tok, pos = params['tok_emb'], params['pos_emb']
    fields = [('tok_emb', _value(tok, 4))]
    if isinstance(pos, (list, tuple)):            # one table per position level
        body = ['[']
        for i, table in enumerate(pos):
            inner = _array_lines(np.asarray(table, dtype=np.float64), 8)
            inner[0] = ' ' * 8 + inner[0]
            inner[-1] += ',' if i < len(pos) - 1 else ''
            body += inner
        fields.append(('pos_emb', '\n'.join(body + ['    ]'])))
    elif compact and _is_zero(pos):
        fields.append(('block_size', str(np.shape(pos)[0])))
    else:
        fields.append(('pos_emb', _value(pos, 4)))
    if not (compact and params_equal(params['out_emb'], tok)):
        fields.append(('out_emb', _value(params['out_emb'], 4)))
    layers = [_layer_text(layer, compact) for layer in params['layers']]
    if layers:
        fields.append(('layers', '[\n' + ',\n'.join(layers) + '\n    ]'))
    elif not compact:
        fields.append(('layers', '[]'))
    if not (compact and _is_default_norm(params['lnf'])):
        fields.append(('lnf', _value(params['lnf'], 4)))
    return '{\n' + ',\n'.join(f'    "{key}": {text}' for key, text in fields) + '\n}\n'
