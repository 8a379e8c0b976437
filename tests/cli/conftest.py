"""The in-process CLI runner: `run("recall", "x")` goes through main(), the CLI's one error
boundary, and returns its exit status, stdout and stderr (error paths need no subprocess)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support.cli import Ran


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Callable[..., Ran]:
    """`funes ARGS` in this process, through main() (the CLI's one error boundary)."""
    import logging

    from funes.cli import main

    def invoke(*args: str) -> Ran:
        root = logging.getLogger()
        handlers, level = root.handlers[:], root.level
        try:
            with pytest.raises(SystemExit) as done:
                main(list(args))
        finally:
            root.handlers[:], root.level = handlers, level
        out = capsys.readouterr()
        code = done.value.code
        return Ran(code if isinstance(code, int) else 1, out.out, out.err)

    return invoke
