"""The funes CLI with a weightless embedder: a real program the robustness tests run as a subprocess.

    python tests/robustness/fake_funes.py index --yes
    python tests/robustness/fake_funes.py recall "kiln glaze"
    python tests/robustness/fake_funes.py --batch commands.json   (a JSON list of argv lists)

It runs funes' own click commands (index, recall, get, status) and renders errors the way
`funes.cli.main` does (`funes: <message>`, the error's exit status: 75 when the memory is
locked); anything else escapes as a traceback, which the tests treat as a failure. The only
difference from `funes` is the Runtime: its embedder is tests/fakes.BagOfWordsEmbedder
(deterministic, ~instant), so tests can index large corpora in subprocesses on 2 cores.

FAKE_EMBED_DELAY_S (seconds per embedding call, default 0) slows embedding down to a real
model's pace, which widens the windows the kill -9 and contention tests aim at.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click  # noqa: E402
import numpy as np  # noqa: E402
from fakes import BagOfWordsEmbedder  # noqa: E402
from numpy.typing import NDArray  # noqa: E402

from funes.cli import cli  # noqa: E402
from funes.errors import FunesError  # noqa: E402
from funes.inference import Embedder, ModelSpec, embedder_spec  # noqa: E402
from funes.memory import Runtime  # noqa: E402


class SlowBagOfWords(BagOfWordsEmbedder):
    def __init__(self, delay_s: float) -> None:
        super().__init__()
        self.delay_s = delay_s

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if self.delay_s:
            time.sleep(self.delay_s)
        return super().embed(texts)


@dataclass
class FakeRuntime(Runtime):
    """A Runtime whose embedder is the bag-of-words fake, whatever FUNES_EMBEDDER says."""

    def embedder_spec_for(self, stamped_model_id: str | None) -> ModelSpec:
        base = embedder_spec("all-minilm-l6-v2-int8")
        return replace(base, name="bag-of-words", model_id=BagOfWordsEmbedder.model_id, dim=64)

    def embedder(self, spec: ModelSpec) -> Embedder:
        if "fake" not in self._embedders:
            delay = float(os.environ.get("FAKE_EMBED_DELAY_S", "0") or 0)
            self._embedders["fake"] = SlowBagOfWords(delay)  # type: ignore[assignment]
        return self._embedders["fake"]


def main(argv: list[str]) -> int:
    base = Runtime.resolve()
    rt = FakeRuntime(base.paths, base.homes, base.models)
    try:
        cli.main(args=argv, prog_name="funes", standalone_mode=False, obj={"runtime": rt})
    except FunesError as exc:
        click.echo(f"funes: {exc.message}", err=True)
        if exc.hint:
            click.echo(f"  hint: {exc.hint}", err=True)
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except SystemExit as exc:  # `get` exits 1 for an absent turn
        return int(exc.code or 0)
    return 0


def batch(path: Path) -> int:
    """Run every argv of a JSON list in this one process; print one JSON line per command:
    {"argv", "rc", "stdout", "stderr"} (saves an interpreter start per command)."""
    import contextlib
    import io
    import json

    for argv in json.loads(path.read_text()):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(argv)
            except Exception:  # a traceback is what the tests look for
                import traceback

                traceback.print_exc()
                rc = 1
        print(
            json.dumps(
                {"argv": argv, "rc": rc, "stdout": out.getvalue(), "stderr": err.getvalue()}
            ),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--batch"]:
        sys.exit(batch(Path(sys.argv[2])))
    sys.exit(main(sys.argv[1:]))
