"""`python -m ludus_trainer.check [--device cpu|cuda]`: whether this Python can run the trainer, before `ludus train`
starts a server for it. Exit 0 when it can; 3 with `{"missing": [...]}` on stdout when packages the trainer imports
are not installed (the caller says how to install them); 1 with one sentence on stderr when the device is not there."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys

# The trainer's dependencies (pyproject.toml), by the name they are imported under.
REQUIRED = ["numpy", "torch", "pyarrow", "onnx", "matplotlib"]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m ludus_trainer.check", description=__doc__)
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    args = p.parse_args(argv)
    missing = [name for name in REQUIRED if importlib.util.find_spec(name) is None]
    if missing:
        print(json.dumps({"missing": missing}))
        sys.exit(3)
    from .cli import device_of
    from .server import TrainerError

    try:
        device_of(args.device)
    except TrainerError as error:
        print(f"ludus-trainer: error: {error}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
