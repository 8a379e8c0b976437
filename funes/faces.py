"""Package faces whose names load their modules on first use.

A face (a package's `__init__`) lists what other packages may import from it. Importing every
module behind it up front made a cold `funes recall` pay for code it never runs (issue 15:
every verb's module, every agent's transcript parser). A lazy face maps each name to the
module that defines it and imports that module when the name is first read.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from types import ModuleType
from typing import Any


class _LazyFace(ModuleType):
    """A package module whose face names resolve on first read (`_exports`: name → (module
    of the package, its name there)).

    A name that is also the name of one of the package's modules (funes.memory's `state`
    function in `state.py`) stays the face's object: importing that module would otherwise
    set the package attribute to the module (the import system does so for every submodule),
    and `from funes.memory import state` would hand out a module where callers expect the
    function. The module itself stays reachable as `funes.memory.state` in imports.
    """

    _exports: Mapping[str, tuple[str, str]]

    def __getattr__(self, name: str) -> Any:
        try:
            module, attribute = self._exports[name]
        except KeyError:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(f"{self.__name__}.{module}"), attribute)
        super().__setattr__(name, value)  # later reads are plain attribute reads
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        if (
            isinstance(value, ModuleType)
            and name in self.__dict__.get("_exports", ())
            and value.__name__ == f"{self.__name__}.{name}"
        ):
            return  # a submodule does not hide the face's name it shares
        super().__setattr__(name, value)


def lazy_face(package: str, exports: Mapping[str, tuple[str, str]]) -> None:
    """Make the already imported `package` a lazy face: each name of `exports` (name on the
    face → (module of `package`, its name there)) imports its module when first read, and is
    kept on the face. AttributeError for a name the face does not offer. Called from the
    package's `__init__`; type checkers read the names from its `if TYPE_CHECKING:` imports."""
    face = sys.modules[package]
    face.__class__ = _LazyFace
    face.__dict__["_exports"] = dict(exports)
