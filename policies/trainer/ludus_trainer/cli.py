"""`python -m ludus_trainer`: trains a policy against a running Ludus server that plays it (`ludus train` runs both).

Each iteration: pull the matches that ended since the last cursor (the tensors dataset), keep the decisions of
the current version in matches it played against itself, and once enough have arrived take one learning step and
register the result as the next version, with its lineage (parent, run, dataset cursor). A run resumes from the
policy's last registered version and its cursor."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid

import numpy as np
import pyarrow as pa
import torch

from .mmd import MmdConfig, MmdLearner
from .network import PolicyNet
from .server import Policy, Server, TrainerError, last_cursor


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m ludus_trainer", description=__doc__)
    p.add_argument("--server", required=True, help="the server's HTTP address, e.g. http://127.0.0.1:2567")
    p.add_argument("--token", default=os.environ.get("LUDUS_TOKEN"), help="an admin token (default: $LUDUS_TOKEN)")
    p.add_argument("--game", required=True)
    p.add_argument("--variant", help="default: the game's default variant")
    p.add_argument("--name", required=True, help="the policy trained: resumed from its last version if it exists")
    p.add_argument("--minutes", type=float, default=10.0, help="stop after this long")
    p.add_argument("--versions", type=int, default=None, help="... or once this many new versions are registered")
    p.add_argument("--matches-per-version", type=int, default=5000, help="self-play matches per learning step")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--run", default=None, help="this run's id, recorded with every version (default: a fresh one)")
    p.add_argument("--hidden", default="128,128", help="hidden layer widths of a new network")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def say(event: str, **fields: object) -> None:
    print(json.dumps({"event": event, **fields}), flush=True)


def device_of(name: str) -> torch.device:
    if name == "cuda" and not torch.cuda.is_available():
        raise TrainerError(
            f"--device cuda: this PyTorch ({torch.__version__}) sees no CUDA device; use --device cpu, or a machine "
            "with an NVIDIA GPU and a CUDA build of PyTorch"
        )
    return torch.device(name)


def own_rows(table: pa.Table, label: str) -> dict[str, np.ndarray] | None:
    """The decisions `label` (policy:name@version) took, against itself or a past version, as arrays."""
    if table.num_rows == 0:
        return None
    names = table.column("participant_name").to_numpy(zero_copy_only=False)
    matches = table.column("match_id").to_pylist()
    keep = (names == label) & table.column("legal").to_numpy(zero_copy_only=False)
    keep &= table.column("action_id").to_numpy() >= 0
    if not keep.any():
        return None
    n = table.num_rows
    obs = table.column("observation").combine_chunks().flatten().to_numpy().reshape(n, -1)
    mask = table.column("legal_mask").combine_chunks().flatten().to_numpy().reshape(n, -1)
    seats = table.column("seat").to_numpy()
    return {
        "obs": obs[keep],
        "mask": mask[keep],
        "action": table.column("action_id").to_numpy()[keep].astype(np.int64),
        "return": table.column("return").to_numpy(zero_copy_only=False)[keep].astype(np.float64),
        "matches": np.array(matches, dtype=object)[keep],
        "episode": np.array([f"{m}/{s}" for m, s in zip(matches, seats)], dtype=object)[keep],
        "seq": table.column("seq").to_numpy()[keep],
    }


def main(argv: list[str] | None = None) -> None:
    try:
        train(parse(argv))
    except TrainerError as error:
        print(f"ludus-trainer: error: {error}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)


def train(args: argparse.Namespace) -> None:
    device = device_of(args.device)
    torch.manual_seed(args.seed)
    server = Server(args.server, args.token)
    game = server.game(args.game)
    variant = args.variant or game["defaultVariant"]
    if variant not in game["variants"]:
        raise TrainerError(f"{args.game} has no variant {variant}; variants: {', '.join(game['variants'])}")
    face = game["variants"][variant]
    if "numericFace" in face:
        raise TrainerError(f"{args.game} ({variant}) has no numeric face to train on: {face['numericFace']}")
    inputs, actions = int(np.prod(face["observationShape"])), face["actionCount"]
    run = args.run or f"run-{uuid.uuid4().hex[:12]}"
    current = server.policy(args.name)
    if current is None:
        net = PolicyNet(inputs, actions, tuple(int(h) for h in args.hidden.split(",")))
        cursor = None
        current = server.register(
            net.to_onnx(), name=args.name, game=args.game, variant=variant, run=run, notes="initial: random weights"
        )
        say("registered", version=current.version, id=current.id, matches=0, decisions=0, seconds=0.0)
    else:
        if current.game != args.game or current.variant != variant:
            raise TrainerError(f"policy {args.name} plays {current.game} ({current.variant}), not {args.game} ({variant})")
        try:
            net = PolicyNet.from_onnx(server.model(current))
        except ValueError as error:
            raise TrainerError(f"cannot resume {args.name}@{current.version}: {error}") from None
        if (net.inputs, net.actions) != (inputs, actions):
            raise TrainerError(
                f"{args.name}@{current.version} reads {net.inputs} numbers and answers {net.actions}; "
                f"{args.game} ({variant}) has {inputs} and {actions}"
            )
        cursor = current.dataset_cursor
        say("resumed", version=current.version, id=current.id, cursor=cursor)
    learner = MmdLearner(inputs, actions, MmdConfig(hidden=tuple(l.out_features for l in net.layers[:-1])), device, net)
    started = time.monotonic()
    deadline = started + args.minutes * 60
    batch: list[dict[str, np.ndarray]] = []
    seen: set[str] = set()
    quiet_since = time.monotonic()
    total_matches = total_decisions = 0
    spent = {"waiting": 0.0, "learning": 0.0, "registering": 0.0}
    registered = 0
    while time.monotonic() < deadline and (args.versions is None or registered < args.versions):
        clock = time.monotonic()
        table = server.tensors(args.game, variant, cursor)
        cursor = last_cursor(table) or cursor
        rows = own_rows(table, f"policy:{current.name}@{current.version}")
        if rows is not None:
            batch.append(rows)
            seen.update(rows["matches"])
            quiet_since = time.monotonic()
        # A step waits for the matches it asked for; a few that never end (an error) do not hold it up for long.
        if len(seen) < args.matches_per_version and not (seen and time.monotonic() - quiet_since > 10):
            # The server is still playing this version's matches: asking again at once would only slow it down.
            time.sleep(0.1)
            spent["waiting"] += time.monotonic() - clock
            continue
        spent["waiting"] += time.monotonic() - clock
        clock = time.monotonic()
        data = {key: np.concatenate([b[key] for b in batch]) for key in ("obs", "mask", "action", "return", "episode", "seq")}
        episode = np.unique(data["episode"], return_inverse=True)[1].reshape(-1)
        learner.update(data["obs"], data["mask"], data["action"], data["return"], episode, data["seq"], len(seen))
        total_matches += len(seen)
        total_decisions += len(data["action"])
        spent["learning"] += time.monotonic() - clock
        clock = time.monotonic()
        current = server.register(
            learner.policy.to_onnx(),
            name=args.name,
            game=args.game,
            variant=variant,
            parent=current.id,
            run=run,
            cursor=cursor,
        )
        registered += 1
        batch, seen = [], set()
        spent["registering"] += time.monotonic() - clock
        say(
            "registered",
            version=current.version,
            id=current.id,
            matches=total_matches,
            decisions=total_decisions,
            seconds=round(time.monotonic() - started, 2),
            # Where the time went: waiting for the server to play and export, learning, registering.
            spent={key: round(value, 2) for key, value in spent.items()},
        )
    say("done", version=current.version, id=current.id, seconds=round(time.monotonic() - started, 2))
