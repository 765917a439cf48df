"""A trainable replay of the tail of a Paddle inference program (legacy static ``.pdmodel``) in dynamic mode.

The recognizer ships as an inference program only; its Python definition lives in PaddleOCR, which is not a
dependency. ``ProgramReplay`` walks the program's ops from a chosen variable (e.g. the backbone's output) to the
logits before the final softmax and runs each one with ``paddle`` dynamic-mode functions, so gradients flow to its
parameters. Each op type has one handler in the explicit ``_HANDLERS`` table; an op without one is an error, not a
silent skip. Batch-norm statistics stay frozen (the layers run as at inference); their scale and shift, the
convolutions, linear layers and layer norms train. ``parameters_numpy`` gives the trained values back by their
program names, for writing into a copy of the program. Training side only."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

# inputs of these op slots are weights that train; every other persistable input (batch-norm mean and variance)
# stays fixed
_TRAINABLE_SLOTS = {("conv2d", "Filter"), ("depthwise_conv2d", "Filter"), ("batch_norm", "Scale"),
                    ("batch_norm", "Bias"), ("layer_norm", "Scale"), ("layer_norm", "Bias"),
                    ("matmul_v2", "Y"), ("elementwise_add", "Y"), ("elementwise_mul", "X"),
                    ("elementwise_mul", "Y")}


@dataclass(frozen=True)
class _Op:
    type: str
    inputs: dict[str, list[str]]
    outputs: dict[str, list[str]]
    attrs: dict[str, Any]


def neck_input(program) -> str:
    """The output of the program's last ``pool2d``: where a PP-OCR recognizer's backbone ends and its neck begins."""
    pools = [op for op in program.global_block().ops if op.type == "pool2d"]
    if not pools:
        raise ValueError("no pool2d in the recognizer program")
    return pools[-1].output("Out")[0]


def logits_var(program) -> str:
    """The input of the program's last softmax: the CTC head's logits."""
    soft = [op for op in program.global_block().ops if op.type == "softmax"]
    if not soft:
        raise ValueError("no softmax in the recognizer program")
    return soft[-1].input("X")[0]


def cut_variable(program, where: str) -> str:
    """Where training starts: ``neck`` (the backbone's output), ``input`` (the image), or ``hN`` (the first
    variable whose static height is N: a cut inside the backbone, e.g. ``h6`` before its last stage)."""
    if where == "neck":
        return neck_input(program)
    block = program.global_block()
    if where == "input":
        return next(op.output("Out")[0] for op in block.ops if op.type == "feed")
    if where.startswith("h") and where[1:].isdigit():
        height = int(where[1:])
        for op in block.ops:
            for name in op.output_arg_names:
                shape = block.var(name).shape if block.has_var(name) else ()
                if len(shape) == 4 and shape[2] == height and not block.var(name).persistable:
                    return name
        raise ValueError(f"no variable of height {height} in the recognizer program")
    raise ValueError(f"unknown cut {where!r}: neck, input or hN")


class ProgramReplay:
    """The ops of ``program`` that lead from ``start`` to ``end``, run in dynamic mode with ``scope``'s weights."""

    def __init__(self, program, scope, start: str, end: str):
        import paddle

        ops = program.global_block().ops
        names = [op.type for op in ops]
        first = next(i for i, op in enumerate(ops) if start in op.input_arg_names)
        last = next(i for i, op in enumerate(ops) if end in op.output_arg_names)
        self.start, self.end = start, end
        self.ops = [_Op(op.type, {k: list(op.input(k)) for k in op.input_names},
                        {k: list(op.output(k)) for k in op.output_names},
                        {a: op.attr(a) for a in op.attr_names}) for op in ops[first:last + 1]]
        missing = sorted({o.type for o in self.ops} - set(_HANDLERS))
        if missing:
            raise ValueError(f"no replay for op types {missing} (program ops {sorted(set(names))})")
        produced = {_result(o) for o in self.ops}
        self.params: dict[str, Any] = {}
        self.trainable: list[str] = []
        for o in self.ops:
            for slot, vars_ in o.inputs.items():
                for n in vars_:
                    if n in produced or n == start or n in self.params:
                        continue
                    var = scope.find_var(n)
                    if var is None:
                        raise ValueError(f"{o.type} reads {n!r}, which is neither computed nor a weight")
                    value = np.array(var.get_tensor())
                    train = (o.type, slot) in _TRAINABLE_SLOTS
                    self.params[n] = paddle.to_tensor(value, stop_gradient=not train)
                    if train:
                        self.trainable.append(n)

    def parameters(self) -> list:
        return [self.params[n] for n in self.trainable]

    def parameters_numpy(self) -> dict[str, np.ndarray]:
        return {n: self.params[n].numpy() for n in self.trainable}

    def __call__(self, x):
        """Logits (batch x frames x classes) of ``x``, the values of the start variable (batch x channels x
        height x width)."""
        env: dict[str, Any] = dict(self.params)
        env[self.start] = x
        for o in self.ops:
            env[_result(o)] = _HANDLERS[o.type](o, env)
        return env[self.end]


def _result(o: _Op) -> str:
    """The variable an op computes (batch norm's other outputs are its statistics, updated in place)."""
    for slot in ("Out", "Y", "Output"):
        if o.outputs.get(slot):
            return o.outputs[slot][0]
    raise ValueError(f"{o.type}: no output slot")


def _in(o: _Op, env: dict, slot: str):
    return env[o.inputs[slot][0]]


def _conv2d(o: _Op, env: dict):
    import paddle.nn.functional as F

    if o.attrs.get("padding_algorithm", "EXPLICIT") != "EXPLICIT":
        raise ValueError(f"conv2d padding {o.attrs['padding_algorithm']} not replayed")
    return F.conv2d(_in(o, env, "Input"), _in(o, env, "Filter"), stride=o.attrs["strides"],
                    padding=o.attrs["paddings"], dilation=o.attrs["dilations"], groups=o.attrs["groups"])


def _batch_norm(o: _Op, env: dict):
    import paddle.nn.functional as F

    return F.batch_norm(_in(o, env, "X"), _in(o, env, "Mean"), _in(o, env, "Variance"), weight=_in(o, env, "Scale"),
                        bias=_in(o, env, "Bias"), training=False, epsilon=o.attrs["epsilon"])


def _pool2d(o: _Op, env: dict):
    import paddle.nn.functional as F

    x = _in(o, env, "X")
    if o.attrs.get("pooling_type") != "avg" or o.attrs.get("padding_algorithm", "EXPLICIT") != "EXPLICIT":
        raise ValueError(f"pool2d {o.attrs.get('pooling_type')}/{o.attrs.get('padding_algorithm')} not replayed")
    if o.attrs.get("global_pooling") or o.attrs.get("adaptive"):
        size = [1, 1] if o.attrs.get("global_pooling") else o.attrs["ksize"]
        return F.adaptive_avg_pool2d(x, size)
    return F.avg_pool2d(x, o.attrs["ksize"], stride=o.attrs["strides"], padding=o.attrs["paddings"],
                        ceil_mode=o.attrs.get("ceil_mode", False), exclusive=o.attrs.get("exclusive", True))


def _elementwise_mul(o: _Op, env: dict):
    x, y = _in(o, env, "X"), _in(o, env, "Y")
    return x * _broadcast(x, y, o.attrs.get("axis", -1))


def _layer_norm(o: _Op, env: dict):
    import paddle.nn.functional as F

    x = _in(o, env, "X")
    return F.layer_norm(x, x.shape[o.attrs["begin_norm_axis"]:], weight=_in(o, env, "Scale"),
                        bias=_in(o, env, "Bias"), epsilon=o.attrs["epsilon"])


def _swish(o: _Op, env: dict):
    import paddle.nn.functional as F

    x = _in(o, env, "X")
    return x * F.sigmoid(x * o.attrs.get("beta", 1.0))


def _hard_swish(x, attrs: dict):
    import paddle

    return x * paddle.clip(x + attrs.get("offset", 3.0), 0.0, attrs.get("threshold", 6.0)) / attrs.get("scale", 6.0)


def _hard_sigmoid(x, attrs: dict):
    import paddle

    return paddle.clip(x * attrs.get("slope", 0.2) + attrs.get("offset", 0.5), 0.0, 1.0)


def _relu(x):
    import paddle.nn.functional as F

    return F.relu(x)


def _broadcast(x, y, axis: int):
    """``y`` shaped to broadcast against ``x`` the way Paddle's ``axis`` attribute aligns it (``y``'s first
    dimension at ``x``'s dimension ``axis``; -1 aligns the trailing dimensions)."""
    import paddle

    if axis == -1 or axis == len(x.shape) - len(y.shape):
        return y
    if not 0 <= axis <= len(x.shape) - len(y.shape):
        raise ValueError(f"broadcast axis {axis} for shapes {x.shape} and {y.shape}")
    return paddle.reshape(y, list(y.shape) + [1] * (len(x.shape) - axis - len(y.shape)))


def _elementwise_add(o: _Op, env: dict):
    x, y = _in(o, env, "X"), _in(o, env, "Y")
    return x + _broadcast(x, y, o.attrs.get("axis", -1))


def _matmul(o: _Op, env: dict):
    import paddle

    return paddle.matmul(_in(o, env, "X"), _in(o, env, "Y"), transpose_x=o.attrs.get("trans_x", False),
                         transpose_y=o.attrs.get("trans_y", False))


def _dropout(o: _Op, env: dict):
    x = _in(o, env, "X")
    if o.attrs.get("dropout_implementation") == "downgrade_in_infer":
        return x * (1.0 - o.attrs["dropout_prob"])
    return x


def _scale(o: _Op, env: dict):
    x, s, b = _in(o, env, "X"), o.attrs["scale"], o.attrs.get("bias", 0.0)
    return x * s + b if o.attrs.get("bias_after_scale", True) else (x + b) * s


def _shape(o: _Op, env: dict):
    return np.array(_in(o, env, "Input").shape, np.int64)  # a static value: shapes are known when replaying


def _slice(o: _Op, env: dict):
    x = _in(o, env, "Input")
    index = [slice(None)] * len(x.shape)
    for axis, s, e in zip(o.attrs["axes"], o.attrs["starts"], o.attrs["ends"]):
        index[axis] = slice(s, e)
    out = x[tuple(index)]
    decrease = o.attrs.get("decrease_axis") or []
    if decrease:
        if isinstance(out, np.ndarray):
            return out.reshape([d for i, d in enumerate(out.shape) if i not in decrease])
        import paddle

        return paddle.squeeze(out, axis=list(decrease))
    return out


def _fill_constant(o: _Op, env: dict):
    return np.full(o.attrs["shape"], o.attrs["value"], np.int64)


def _reshape(o: _Op, env: dict):
    import paddle

    x = _in(o, env, "X")
    if o.inputs.get("ShapeTensor"):
        shape = [int(np.asarray(env[n]).reshape(-1)[0]) for n in o.inputs["ShapeTensor"]]
    else:
        shape = list(o.attrs["shape"])
    shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return paddle.reshape(x, shape)


def _transpose(o: _Op, env: dict):
    import paddle

    return paddle.transpose(_in(o, env, "X"), perm=o.attrs["axis"])


def _flatten(o: _Op, env: dict):
    import paddle

    return paddle.flatten(_in(o, env, "X"), o.attrs["start_axis"], o.attrs["stop_axis"])


def _squeeze(o: _Op, env: dict):
    import paddle

    return paddle.squeeze(_in(o, env, "X"), axis=list(o.attrs["axes"]))


def _softmax(o: _Op, env: dict):
    import paddle.nn.functional as F

    return F.softmax(_in(o, env, "X"), axis=o.attrs["axis"])


def _concat(o: _Op, env: dict):
    import paddle

    return paddle.concat([env[n] for n in o.inputs["X"]], axis=o.attrs["axis"])


_HANDLERS: dict[str, Callable[[_Op, dict], Any]] = {
    "assign": lambda o, env: _in(o, env, "X"),
    "conv2d": _conv2d,
    "depthwise_conv2d": _conv2d,
    "pool2d": _pool2d,
    "elementwise_mul": _elementwise_mul,
    "hard_swish": lambda o, env: _hard_swish(_in(o, env, "X"), o.attrs),
    "hard_sigmoid": lambda o, env: _hard_sigmoid(_in(o, env, "X"), o.attrs),
    "relu": lambda o, env: _relu(_in(o, env, "X")),
    "batch_norm": _batch_norm,
    "layer_norm": _layer_norm,
    "swish": _swish,
    "elementwise_add": _elementwise_add,
    "matmul_v2": _matmul,
    "dropout": _dropout,
    "scale": _scale,
    "shape": _shape,
    "slice": _slice,
    "fill_constant": _fill_constant,
    "reshape2": _reshape,
    "transpose2": _transpose,
    "flatten_contiguous_range": _flatten,
    "squeeze2": _squeeze,
    "softmax": _softmax,
    "concat": _concat,
}
