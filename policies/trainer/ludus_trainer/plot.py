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
    # Zero-sum poker has its exploitability; general-sum games their welfare and their record against an exploiter.
    exploiter = (run.get("exploiter") or {}).get("name", "the exploiter")
    figures = [
        (key, label)
        for key, label in (
            ("exploitability", "exploitability (NashConv / 2)"),
            ("welfare", "reward per round, versions together"),
            ("againstExploiter", f"reward per round against {exploiter}"),
        )
        if any(p.get(key) is not None for p in run["curve"])
    ]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, key, label in ((axes[0], "seconds", "wall-clock seconds"), (axes[1], "matches", "self-play matches")):
        for figure, name in figures:
            points = [p for p in run["curve"] if p.get(figure) is not None]
            ax.plot([p[key] for p in points], [p[figure] for p in points], marker=".", label=name)
        ax.set_xlabel(label)
        if figures and figures[0][0] == "exploitability":
            ax.set_ylabel(figures[0][1])
            ax.set_yscale("log")
        else:
            ax.legend()
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle(f"{run['name']} on {run['game']} ({run['variant']}), {run['run']}")
    fig.tight_layout()
    fig.savefig(png, dpi=100)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m ludus_trainer.plot curve.json curve.png")
    plot(sys.argv[1], sys.argv[2])
