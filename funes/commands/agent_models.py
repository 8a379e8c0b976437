"""Whether the agents' funes processes would embed with the memory's model (for `funes status`).

Agents' hooks (and the spool worker they start) and MCP servers run funes through the launcher
(funes.wiring.launcher) in the agent's environment, which rarely holds funes' settings: they
get the settings `funes add` carried into the launcher, as of when it ran. A `funes add` run
before the offline weights were set up, or from another shell, leaves settings that differ
from the ones the memory was indexed with, and nothing else says so:

- an explicit FUNES_EMBEDDER naming another model than the memory's stamp: recall through the
  agent refuses the memory, and the worker cannot index turns into it;
- the model (FUNES_EMBEDDER, else the memory's own, as Runtime.embedder_spec_for chooses)
  ships in a weight package the launcher's process cannot find (FUNES_MODEL_PATH not carried):
  recall through the agent answers from BM25 alone, the worker stores turns without vectors.

Judged from the launcher's text and the import path alone: nothing is loaded or hashed.
"""

from __future__ import annotations

import importlib.machinery
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from funes.errors import UsageError
from funes.inference import (
    DEFAULT_EMBEDDER,
    ModelChoice,
    ModelSpec,
    embedder_for_model_id,
    embedder_name,
    embedder_spec,
)
from funes.memory import Runtime
from funes.wiring import launcher


@dataclass(frozen=True, slots=True)
class LauncherModelProblem:
    """Why the launcher's processes cannot embed with the memory's model: `message` (one line,
    what they use and what the memory needs) and `consequence` (what the agents then get)."""

    message: str
    consequence: str


def missing_packages(spec: ModelSpec, base: Sequence[str], model_path: Sequence[str]) -> list[str]:
    """The weight packages of `spec` (package names) that a Python whose import path is `base`
    followed by the FUNES_MODEL_PATH folders `model_path` cannot find, or that lack their
    file; [] when `spec` ships none (its files come from the Hugging Face Hub)."""
    path = [*base, *(str(Path(p).expanduser()) for p in model_path)]
    missing: list[str] = []
    for file in (spec.onnx, spec.tokenizer):
        if file.package is None or file.package in missing:
            continue
        found = importlib.machinery.PathFinder.find_spec(file.package, path)
        folders = list(found.submodule_search_locations or []) if found is not None else []
        if not any((Path(folder) / file.path).is_file() for folder in folders):
            missing.append(file.package)
    return missing


def launcher_model_problem(rt: Runtime, stamped: str) -> LauncherModelProblem | None:
    """What goes wrong embedding into a memory stamped with model id `stamped` in the processes
    the launcher starts (None: nothing, no launcher, or a launcher running another Python,
    whose own warning `funes status` gives)."""
    path = rt.paths.launcher
    python = launcher.target(path)
    if python is None:
        return None
    carried = launcher.settings(path)
    choice = ModelChoice.resolve(carried)
    where = f"the launcher {path}"
    needs = embedder_name(stamped) or stamped
    if choice.embedder:
        try:
            spec = embedder_spec(choice.embedder)
        except UsageError as exc:
            return LauncherModelProblem(
                f"{where} sets FUNES_EMBEDDER={choice.embedder}: {exc.message}",
                "recall through the agents and the hooks' indexing stop on it",
            )
        if spec.model_id != stamped:
            return LauncherModelProblem(
                f"{where} sets FUNES_EMBEDDER={choice.embedder}, but this memory was built "
                f"with {needs}",
                "recall through the agents refuses the memory, and the hooks cannot index "
                "turns into it",
            )
    else:
        spec = embedder_for_model_id(stamped) or embedder_spec(DEFAULT_EMBEDDER)
        if spec.model_id != stamped:  # a model this funes does not know: recall refuses it too
            return None  # `funes status` says so for every process (_model_status)
    if python != sys.executable:
        return None  # another install's import path: not judged from here
    own = {str(Path(p).expanduser()) for p in rt.models.model_path}
    base = [p for p in sys.path if p not in own]
    missing = missing_packages(spec, base, choice.model_path)
    if not missing:
        return None
    folders = ":".join(choice.model_path) or "not set"
    return LauncherModelProblem(
        f"{where} runs model {spec.name} without its weights ({', '.join(missing)} not found; "
        f"its FUNES_MODEL_PATH: {folders})",
        "recall through the agents answers from BM25 alone, and the turns the hooks index get "
        "no vectors",
    )
