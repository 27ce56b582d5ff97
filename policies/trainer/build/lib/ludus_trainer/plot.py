"""`python -m ludus_trainer.plot curve.json curve.png`: a run's exploitability against wall-clock and matches."""

from __future__ import annotations

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def plot(curve_file: str, png: str) -> None:
    with open(curve_file) as f:
        run = json.load(f)
    points = [p for p in run["curve"] if p.get("exploitability") is not None]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, key, label in ((axes[0], "seconds", "wall-clock seconds"), (axes[1], "matches", "self-play matches")):
        ax.plot([p[key] for p in points], [p["exploitability"] for p in points], marker=".")
        ax.set_xlabel(label)
        ax.set_ylabel("exploitability (NashConv / 2)")
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle(f"{run['name']} on {run['game']} ({run['variant']}), {run['run']}")
    fig.tight_layout()
    fig.savefig(png, dpi=100)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m ludus_trainer.plot curve.json curve.png")
    plot(sys.argv[1], sys.argv[2])
