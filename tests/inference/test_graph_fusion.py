"""funes.inference.fusion keeps the original graph whenever its rewrite is not the same function."""

from __future__ import annotations

from pathlib import Path

import pytest

from funes.inference import MINILM_L6_INT8_PKG, fusion
from funes.inference.onnx_backend import resolve_file

pytestmark = pytest.mark.models


def _folded(tmp_path: Path) -> Path:
    """The offline MiniLM after onnxruntime's basic optimizations (step 1 of the build)."""
    import onnxruntime as ort

    spec = MINILM_L6_INT8_PKG
    folded = tmp_path / "folded.onnx"
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    ort.InferenceSession(
        str(resolve_file(spec, spec.onnx)), options, providers=["CPUExecutionProvider"]
    )
    return folded


def test_a_rewrite_that_computes_something_else_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _folded(tmp_path)
    target = tmp_path / "fused.onnx"
    assert fusion.fuse(str(source), str(target))  # what the build keeps
    monkeypatch.setattr(fusion, "_same_function", lambda original, rewritten: False)
    assert not fusion.fuse(str(source), str(target))
    assert target.read_bytes() == source.read_bytes()


def test_a_wrong_scale_fails_the_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check is real: attention with twice the scale is caught and the original kept."""
    source = _folded(tmp_path)
    rewrite = fusion.rewrite

    def doubled(model):  # type: ignore[no-untyped-def]
        model, attentions, gelus = rewrite(model)
        for node in model.graph.node:
            if node.op_type == "MultiHeadAttention":
                for a in node.attribute:
                    if a.name == "scale":
                        a.f *= 2
        return model, attentions, gelus

    monkeypatch.setattr(fusion, "rewrite", doubled)
    target = tmp_path / "fused.onnx"
    assert not fusion.fuse(str(source), str(target))
    assert target.read_bytes() == source.read_bytes()


def test_a_graph_without_an_attention_mask_is_left_alone(tmp_path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    node = helper.make_node("Softmax", ["x"], ["y"], axis=-1)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
    )
    path = tmp_path / "g.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    assert not fusion.fuse(str(path), str(tmp_path / "out.onnx"))
    assert (tmp_path / "out.onnx").read_bytes() == path.read_bytes()
