"""Attention and GELU of a BERT-family float graph rewritten as onnxruntime's fused operators.

Used by funes.inference.quantize before quantizing (step 2 of its build). The exported graphs
spell each layer's attention out in ~25 small nodes (reshapes and transposes of Q, K and V,
scale, mask, Softmax, and for torch's SDPA export an IsNaN/Where guard after it) and GELU in
five (Div, Erf, Add, Mul, Mul); onnxruntime's own fusions recognise neither in the MiniLM
export. Here each attention becomes one `com.microsoft.MultiHeadAttention` over the projected
Q, K and V (the projections stay MatMul + Add, which the quantizer turns into int8 products),
and each GELU one `com.microsoft.Gelu`. On the 2-core bench machine one 128-token text ran
12.9 → 9.2 ms (with the SkipLayerNormalization fusion left out, see quantize.py).

The fused attention has no key padding mask: the graph is built for the current recipe, which
runs one unpadded text per call (funes.inference.onnx_backend), where the mask is all ones.
onnxruntime's MultiHeadAttention takes a faster path without one: 11.83 → 11.31 ms per dev-set
text (single thread, 108 tokens); vectors within cosine 0.995 of the masked graph's (the int8
activations round differently), recall quality unchanged (bench/README.md). The graph's
`attention_mask` input is then unused: a padded batch would attend to its padding, so the
fused graph must never be run on one (its float32 recipes run the original graph).

The rewrite is pattern matching on the graph, so `fuse` checks its own work: the rewritten
float graph must give the same hidden states as the original (within float rounding) on probe
texts of different lengths, one per run; otherwise the original graph is used unchanged. A
layer whose nodes do not match the expected shapes is left as it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

_MS = "com.microsoft"
# Largest difference allowed between the rewritten and the original float graph's hidden
# states on the probe (the MiniLM graph: ~2e-6; a wrong rewrite is off by ~1).
_TOLERANCE = 1e-3


class _Graph:
    """Producer and consumer maps of a graph's nodes and its scalar constants."""

    def __init__(self, graph: Any, nodes: Iterable[Any]) -> None:
        from onnx import numpy_helper

        self.nodes = list(nodes)
        self.init = {i.name: i for i in graph.initializer}
        self.producer = {o: n for n in self.nodes for o in n.output}
        self.consumers: dict[str, list[Any]] = {}
        for n in self.nodes:
            for i in n.input:
                self.consumers.setdefault(i, []).append(n)
        self._array = numpy_helper.to_array

    def scalar(self, name: str) -> float | None:
        t = self.init.get(name)
        if t is None:
            return None
        a = self._array(t)
        return float(a.reshape(-1)[0]) if a.size == 1 else None

    def matrix_cols(self, name: str) -> int | None:
        t = self.init.get(name)
        return int(t.dims[1]) if t is not None and len(t.dims) == 2 else None

    def only_consumer(self, name: str, op: str) -> Any:
        found = [n for n in self.consumers.get(name, []) if n.op_type == op]
        if len(found) != 1:
            raise _NoMatch(f"{name}: {len(found)} {op} consumers")
        return found[0]

    def projection(self, name: str) -> tuple[str, float]:
        """Follow Reshape / Transpose / scaling by a constant up to a projection's output
        (Add of a MatMul by a 2-D weight and a bias): (its name, the product of the scales)."""
        scale = 1.0
        for _ in range(16):
            n = self.producer.get(name)
            if n is None:
                raise _NoMatch(f"{name}: no producer")
            if n.op_type == "Add" and any(
                (m := self.producer.get(i)) is not None
                and m.op_type == "MatMul"
                and self.matrix_cols(m.input[1]) is not None
                for i in n.input
            ):
                return name, scale
            if n.op_type in ("Reshape", "Transpose"):
                name = n.input[0]
            elif n.op_type in ("Mul", "Div") and (s := self.scalar(n.input[1])) is not None:
                scale = scale * s if n.op_type == "Mul" else scale / s
                name = n.input[0]
            else:
                raise _NoMatch(f"{n.op_type} above the attention scores")
        raise _NoMatch("no projection found")

    def hidden_of(self, projection: str) -> int:
        add = self.producer[projection]
        for i in add.input:
            m = self.producer.get(i)
            if m is not None and m.op_type == "MatMul":
                cols = self.matrix_cols(m.input[1])
                if cols is not None:
                    return cols
        raise _NoMatch("projection without a weight")


class _NoMatch(Exception):
    pass


def _attention(g: _Graph, softmax: Any) -> tuple[Any, set[str]]:
    """The MultiHeadAttention node replacing the attention around `softmax`, and the output it
    takes over (the attention's output in [batch, sequence, hidden])."""
    from onnx import helper

    node = g.producer[softmax.input[0]]
    candidates = [node]
    if node.op_type == "Add":  # the additive mask: the scores are one of its inputs
        candidates = [g.producer[i] for i in node.input if i in g.producer]
    found = None
    for scores in candidates:
        try:
            found = _scores(g, scores)
            break
        except _NoMatch:
            continue
    if found is None:
        raise _NoMatch("no Q·K scores under the softmax")
    scores, scale = found
    q, q_scale = g.projection(scores.input[0])
    k, k_scale = g.projection(scores.input[1])
    probs = softmax.output[0]
    after = g.consumers.get(probs, [])
    guard = [n for n in after if n.op_type == "Where"]  # SDPA export: Where(IsNaN(p), 0, p)
    if guard:
        probs = guard[0].output[0]
    weighted = g.only_consumer(probs, "MatMul")
    v, v_scale = g.projection(weighted.input[1])
    if v_scale != 1.0:
        raise _NoMatch("scaled values")
    transpose = g.only_consumer(weighted.output[0], "Transpose")
    out = g.only_consumer(transpose.output[0], "Reshape")
    hidden = g.hidden_of(q)
    if g.hidden_of(k) != hidden or g.hidden_of(v) != hidden:
        raise _NoMatch("Q, K and V of different widths")
    head = _head_size(g, q)
    node = helper.make_node(
        "MultiHeadAttention",
        [q, k, v],  # no key padding mask: one unpadded text per run (module docstring)
        [out.output[0]],
        name=f"funes_mha_{out.output[0]}",
        domain=_MS,
        num_heads=hidden // head,
        scale=scale * q_scale * k_scale,
    )
    return node, {out.output[0]}


def _scores(g: _Graph, node: Any) -> tuple[Any, float]:
    """The MatMul of Q·K below `node` through scalings by constants, and their product."""
    scale = 1.0
    while node.op_type in ("Mul", "Div"):
        s = g.scalar(node.input[1])
        if s is None:
            raise _NoMatch("scores scaled by a tensor")
        scale = scale * s if node.op_type == "Mul" else scale / s
        node = g.producer.get(node.input[0])
        if node is None:
            raise _NoMatch("scores from a graph input")
    if node.op_type != "MatMul":
        raise _NoMatch(f"scores from {node.op_type}")
    g.projection(node.input[0])
    g.projection(node.input[1])
    return node, scale


def _head_size(g: _Graph, projection: str) -> int:
    """Head size from the Reshape of Q to [batch, sequence, heads or -1, head size]."""
    import numpy as np

    reshape = next(n for n in g.consumers[projection] if n.op_type == "Reshape")
    shape_name = reshape.input[1]
    if shape_name in g.init:
        dims = [int(d) for d in np.asarray(g._array(g.init[shape_name])).reshape(-1)]
        return dims[-1]
    concat = g.producer.get(shape_name)
    if concat is None or concat.op_type != "Concat":
        raise _NoMatch("head shape not found")
    last = g.scalar(concat.input[-1])
    if last is None:
        raise _NoMatch("head size not a constant")
    return int(last)


def _gelu(g: _Graph, erf: Any) -> tuple[Any, str] | None:
    """The Gelu node replacing x·0.5·(1 + erf(x/√2)) around `erf`, in either order of the
    two products, and the output it takes over; None when the nodes are something else."""
    from onnx import helper

    div = g.producer.get(erf.input[0])
    if div is None or div.op_type != "Div" or abs((g.scalar(div.input[1]) or 0) - 2**0.5) > 1e-6:
        return None
    x = div.input[0]
    try:
        add = g.only_consumer(erf.output[0], "Add")
        m1 = g.only_consumer(add.output[0], "Mul")
        m2 = g.only_consumer(m1.output[0], "Mul")
    except _NoMatch:
        return None
    if g.scalar(next(i for i in add.input if i != erf.output[0])) != 1.0:
        return None
    others = {
        next(i for i in m1.input if i != add.output[0]),
        next(i for i in m2.input if i != m1.output[0]),
    }
    if len(others) != 2 or x not in others or g.scalar((others - {x}).pop()) != 0.5:
        return None
    return helper.make_node(
        "Gelu", [x], [m2.output[0]], name=f"funes_gelu_{m2.output[0]}", domain=_MS
    ), m2.output[0]


def rewrite(model: Any) -> tuple[Any, int, int]:
    """`model` (an onnx ModelProto, changed in place) with attentions and GELUs fused; returns
    (model, attentions fused, GELUs fused). Nothing is verified here (see `fuse`)."""
    from onnx import helper

    graph = model.graph
    if "attention_mask" not in {i.name for i in graph.input}:
        return model, 0, 0
    g = _Graph(graph, graph.node)
    replaced: set[str] = set()
    added: list[Any] = []
    for softmax in [n for n in g.nodes if n.op_type == "Softmax"]:
        try:
            node, outputs = _attention(g, softmax)
        except (_NoMatch, KeyError, StopIteration):
            continue
        added.append(node)
        replaced |= outputs
    attentions = len(added)
    nodes = [n for n in g.nodes if not set(n.output) & replaced] + added
    g = _Graph(graph, nodes)
    gelus: list[Any] = []
    gelu_outputs: set[str] = set()
    for erf in [n for n in g.nodes if n.op_type == "Erf"]:
        found = _gelu(g, erf)
        if found is not None:
            gelus.append(found[0])
            gelu_outputs.add(found[1])
    nodes = [n for n in nodes if not set(n.output) & gelu_outputs] + gelus
    _replace_nodes(model, nodes)
    if (attentions or gelus) and not any(o.domain == _MS for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(_MS, 1))
    return model, attentions, len(gelus)


def _replace_nodes(model: Any, nodes: list[Any]) -> None:
    """Set the graph's nodes to `nodes` less those nothing uses, in topological order, and drop
    initializers nothing reads any more."""
    graph = model.graph
    outputs = {o.name for o in graph.output}
    while True:
        used = {i for n in nodes for i in n.input} | outputs
        alive = [n for n in nodes if any(o in used for o in n.output)]
        if len(alive) == len(nodes):
            break
        nodes = alive
    available = {i.name for i in graph.input} | {i.name for i in graph.initializer} | {""}
    ordered: list[Any] = []
    pending = nodes
    while pending:
        rest = []
        for n in pending:
            if all(i in available for i in n.input):
                ordered.append(n)
                available.update(n.output)
            else:
                rest.append(n)
        if len(rest) == len(pending):
            raise ValueError("the rewritten graph has a cycle or a missing input")
        pending = rest
    used = {i for n in ordered for i in n.input}
    initializers = [i for i in graph.initializer if i.name in used]
    del graph.node[:]
    graph.node.extend(ordered)
    del graph.initializer[:]
    graph.initializer.extend(initializers)


def fuse(source: str, target: str) -> bool:
    """Write `source` (a float graph file) with fused attention and GELU as `target`, when the
    rewrite fused something and gives the same hidden states on the probe texts (unpadded, one
    per run); otherwise copy `source` to `target` unchanged. Returns whether the fused graph
    was kept."""
    import shutil

    import onnx

    try:
        model, attentions, gelus = rewrite(onnx.load(source))
    except ValueError:  # the rewrite broke the graph: keep the original
        attentions = gelus = 0
    if not attentions and not gelus:
        shutil.copyfile(source, target)
        return False
    onnx.save(model, target)
    if _same_function(source, target):
        return True
    shutil.copyfile(source, target)
    return False


# Token counts of the probe texts `_same_function` runs, one per run: different lengths, so a
# rewrite that fixed a sequence length somewhere would show.
_PROBE_LENGTHS = (24, 15)


def _same_function(original: str, rewritten: str) -> bool:
    import numpy as np

    from funes.inference.telemetry import keep_off

    keep_off()  # before onnxruntime's first import
    import onnxruntime as ort

    rng = np.random.default_rng(0)
    probes = [rng.integers(1000, 20000, size=(1, n), dtype=np.int64) for n in _PROBE_LENGTHS]
    sessions = []
    for path in (original, rewritten):
        options = ort.SessionOptions()
        options.log_severity_level = 3
        options.intra_op_num_threads = 1
        try:
            sessions.append(ort.InferenceSession(path, options, providers=["CPUExecutionProvider"]))
        except Exception:  # onnxruntime raises its own types: the rewrite is not runnable
            return False
    for ids in probes:
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": ids * 0}
        outs = []
        for session in sessions:
            names = {i.name for i in session.get_inputs()}
            try:
                outs.append(session.run(None, {k: v for k, v in feeds.items() if k in names})[0])
            except Exception:  # onnxruntime raises its own types
                return False
        a, b = outs
        if a.shape != b.shape or not np.max(np.abs(a - b)) <= _TOLERANCE:
            return False
    return True
