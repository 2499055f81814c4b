"""Regenerate the committed Python code for ``hollywood_gin.proto`` (``make proto``).

Uses the pinned ``grpcio-tools`` (protoc and the gRPC plugin) and ``mypy-protobuf`` (typed
stubs). A test regenerates into a temporary folder and fails if the committed files differ.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from grpc_tools import protoc

PROTO = Path("protocol") / "hollywood_gin.proto"
GENERATED = (
    "hollywood_gin_pb2.py",
    "hollywood_gin_pb2.pyi",
    "hollywood_gin_pb2_grpc.py",
    "hollywood_gin_pb2_grpc.pyi",
)


def _plugin(name: str) -> str:
    """Path of a protoc plugin installed beside this interpreter (or on PATH)."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise RuntimeError(f"{name} not found: install the dev extra (mypy-protobuf)")
    return found


def generate(root: Path, out: Path) -> list[Path]:
    """Compile ``root/protocol/hollywood_gin.proto`` into ``out/protocol/``; returns the files.

    Raises:
        RuntimeError: protoc failed or a plugin is missing.
    """
    (out / "protocol").mkdir(parents=True, exist_ok=True)
    include = str(Path(protoc.__file__).parent / "_proto")
    args = [
        "grpc_tools.protoc",
        f"-I{root}",
        f"-I{include}",
        f"--plugin=protoc-gen-mypy={_plugin('protoc-gen-mypy')}",
        f"--plugin=protoc-gen-mypy_grpc={_plugin('protoc-gen-mypy_grpc')}",
        f"--python_out={out}",
        f"--mypy_out={out}",
        f"--grpc_python_out={out}",
        f"--mypy_grpc_out={out}",
        str(PROTO),
    ]
    if protoc.main(args) != 0:
        raise RuntimeError(f"protoc failed on {root / PROTO}")
    return [out / "protocol" / name for name in GENERATED]


def main() -> None:
    """Regenerate in place: ``python -m protocol.codegen ROOT``."""
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    for path in generate(root, root):
        print(f"wrote {path.relative_to(root)}")


if __name__ == "__main__":
    main()
