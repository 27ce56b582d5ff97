"""`python -m ludus_trainer`: trains a policy against a running Ludus server that plays it (`ludus train` runs both).

Each iteration: pull the matches that ended since the last cursor (the tensors dataset), keep the decisions of
the current version in matches it played against itself, and once enough have arrived take one learning step and
register the result as the next version, with its lineage (parent, run, dataset cursor). A run resumes from the
policy's last registered version and its cursor."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
import uuid

import numpy as np
import pyarrow as pa
import torch

from .adalign import AdAlignConfig, AdAlignLearner, SeatRows
from .cfr import STATE_KEY, CfrConfig, CfrLearner
from .mmd import MmdConfig, MmdLearner
from .network import PolicyNet, metadata_of, with_metadata
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
    p.add_argument(
        "--matches-per-version", type=int, default=None,
        help="matches per learning step (default 100 for cfr, 5000 for mmd, 384 for adalign and ppo)"
    )
    p.add_argument(
        "--method", choices=list(METHODS), default=None,
        help="cfr: outcome-sampling CFR+ for zero-sum poker, the average strategy as <name> and the policy self-play "
        "samples with as <name>.behaviour (default for a two-player zero-sum game, as the catalog's utility says); "
        "mmd: sampled magnetic mirror descent, "
        "one network; adalign: a policy per seat, named <name>.0 and <name>.1 (default otherwise); ppo: as adalign "
        "without the alignment term (naive PPO)",
    )
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--run", default=None, help="this run's id, recorded with every version (default: a fresh one)")
    p.add_argument("--hidden", default="128,128", help="hidden layer widths of a new mmd network")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


# Where a per-seat policy's model keeps its critic for a resumed run.
CRITIC_KEY = "ludus.adalign.critic"


def say(event: str, **fields: object) -> None:
    print(json.dumps({"event": event, **fields}), flush=True)


def device_of(name: str) -> torch.device:
    if name == "cuda" and not torch.cuda.is_available():
        raise TrainerError(
            f"--device cuda: this PyTorch ({torch.__version__}) sees no CUDA device; use --device cpu, or a machine "
            "with an NVIDIA GPU and a CUDA build of PyTorch"
        )
    return torch.device(name)


def columns(table: pa.Table) -> dict[str, np.ndarray]:
    """The dataset's columns the learners read, as arrays (tensors and masks flattened to [rows, width])."""
    n = table.num_rows
    return {
        "name": table.column("participant_name").to_numpy(zero_copy_only=False),
        "match": np.array(table.column("match_id").to_pylist(), dtype=object),
        "seat": table.column("seat").to_numpy(),
        "turn": table.column("turn").to_numpy(),
        "seq": table.column("seq").to_numpy(),
        "legal": table.column("legal").to_numpy(zero_copy_only=False) & (table.column("action_id").to_numpy() >= 0),
        "obs": table.column("observation").combine_chunks().flatten().to_numpy().reshape(n, -1),
        "mask": table.column("legal_mask").combine_chunks().flatten().to_numpy().reshape(n, -1),
        "state": table.column("state").combine_chunks().flatten().to_numpy().reshape(n, -1),
        "action": table.column("action_id").to_numpy().astype(np.int64),
        "reward": table.column("reward").to_numpy(zero_copy_only=False).astype(np.float64),
        "return": table.column("return").to_numpy(zero_copy_only=False).astype(np.float64),
    }


class Method:
    """A learning method: the policies it trains (one name, or one per seat) and its step from their rows."""

    # The names' suffixes of a shared policy; a policy per seat is named by its seat (`.0`, `.1`, ...).
    suffixes: list[str] = []

    def networks(self) -> list[PolicyNet]:
        raise NotImplementedError

    def models(self) -> list[bytes]:
        """The ONNX models to register, in the order of `suffixes`."""
        return [net.to_onnx() for net in self.networks()]

    def step(self, rows: dict[str, np.ndarray], labels: list[str], matches: int) -> None:
        raise NotImplementedError


class Mmd(Method):
    """Zero-sum games: one network in every seat (a symmetric learner), sampled magnetic mirror descent."""

    suffixes = [""]

    def __init__(self, nets: list[PolicyNet | None], inputs: int, actions: int, hidden: tuple[int, ...], device: torch.device):
        net = nets[0] or PolicyNet(inputs, actions, hidden)
        self.learner = MmdLearner(inputs, actions, MmdConfig(hidden=tuple(l.out_features for l in net.linears[:-1])), device, net)

    def networks(self) -> list[PolicyNet]:
        return [self.learner.policy]

    def step(self, rows: dict[str, np.ndarray], labels: list[str], matches: int) -> None:
        keep = (rows["name"] == labels[0]) & rows["legal"]
        seat_of_match = np.char.add(np.char.add(rows["match"][keep].astype(str), "/"), rows["seat"][keep].astype(str))
        episode = np.unique(seat_of_match, return_inverse=True)[1]
        self.learner.update(
            rows["obs"][keep], rows["mask"][keep], rows["action"][keep], rows["return"][keep],
            episode.reshape(-1), rows["seq"][keep], matches,
        )


class Cfr(Method):
    """Zero-sum games: outcome-sampling CFR+ with a baseline; self-play samples with the behaviour, registered first
    (the server seats `<name>.behaviour` once `<name>` has the step's version), the average is evaluated."""

    suffixes = [".behaviour", ""]

    def __init__(self, models: list[bytes | None], inputs: int, actions: int) -> None:
        state = metadata_of(models[1], STATE_KEY) if models[1] is not None else None
        if models[1] is not None and state is None:
            raise TrainerError("the policy was not trained with cfr (its model carries no cfr tables); resume it with its own method")
        self.learner = CfrLearner(inputs, actions, CfrConfig(), state)

    def models(self) -> list[bytes]:
        behaviour, average = self.learner.networks()
        return [behaviour.to_onnx(), with_metadata(average.to_onnx(), STATE_KEY, self.learner.state())]

    def step(self, rows: dict[str, np.ndarray], labels: list[str], matches: int) -> None:
        keep = (rows["name"] == labels[0]) & rows["legal"]
        # A match counts only if the behaviour made every decision of it: the sampled trajectory must be whole.
        inverse = np.unique(rows["match"].astype(str), return_inverse=True)[1].reshape(-1)
        whole = np.bincount(inverse, weights=keep) == np.bincount(inverse)
        keep &= whole[inverse]
        obs = rows["obs"][keep]
        if not np.isin(obs, (0.0, 1.0)).all():
            raise TrainerError("cfr keys its tables by the information-state tensor and needs binary tensors (Kuhn, Leduc poker)")
        self.learner.update(
            obs, rows["mask"][keep], rows["action"][keep], rows["return"][keep],
            rows["match"][keep], rows["seat"][keep], rows["seq"][keep], rows["state"][keep],
        )


class AdAlign(Method):
    """General-sum games: an actor and a critic per seat, PPO with Advantage Alignment."""

    def __init__(
        self, nets: list[PolicyNet | None], models: list[bytes | None], inputs: int, actions: int,
        device: torch.device, beta: float,
    ) -> None:
        config = AdAlignConfig(beta=beta)
        actors = [net or AdAlignLearner.new_actor(inputs, actions, config) for net in nets]
        self.learner = AdAlignLearner(inputs, actions, config, device, actors)
        # A resumed seat gets its critic back (versions written before critics were kept start theirs afresh).
        for seat, model in enumerate(models):
            state = metadata_of(model, CRITIC_KEY) if model is not None else None
            if state is not None:
                self.learner.load_critic_state(seat, state)

    def models(self) -> list[bytes]:
        return [
            with_metadata(actor.to_onnx(), CRITIC_KEY, self.learner.critic_state(seat))
            for seat, actor in enumerate(self.learner.actors)
        ]

    def step(self, rows: dict[str, np.ndarray], labels: list[str], matches: int) -> None:
        seats = []
        # Per seat, the matches in which that seat's current learner sat in it.
        met = [set(rows["match"][(rows["name"] == label) & (rows["seat"] == seat)]) for seat, label in enumerate(labels)]
        for seat, label in enumerate(labels):
            keep = (rows["name"] == label) & (rows["seat"] == seat) & rows["legal"]
            order = np.lexsort((rows["seq"][keep], rows["match"][keep].astype(str)))
            pick = {key: value[keep][order] for key, value in rows.items()}
            aligned = np.array(
                [[other != seat and m in met[other] for other in range(len(labels))] for m in pick["match"]], dtype=bool
            ).reshape(len(pick["match"]), len(labels))
            seats.append(SeatRows(
                obs=pick["obs"], mask=pick["mask"], action=pick["action"], reward=pick["reward"],
                match=pick["match"], turn=pick["turn"], aligned=aligned,
            ))
        self.learner.update(seats)


METHODS: dict[str, type[Method]] = {"cfr": Cfr, "mmd": Mmd, "adalign": AdAlign, "ppo": AdAlign}


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
    seats = int(face["seats"])
    # The game's own utility type (OpenSpiel's): one symmetric policy learns a two-player zero-sum game.
    zero_sum = game["utility"] == "zero-sum" and seats == 2
    method_name = args.method or ("cfr" if zero_sum else "adalign")
    if method_name in ("cfr", "mmd") and not zero_sum:
        why = f"it is {game['utility']}" if game["utility"] != "zero-sum" else f"it has {seats} seats"
        raise TrainerError(
            f"{method_name} trains two-player zero-sum games, and {args.game} ({variant}) is not one ({why}); use adalign or ppo"
        )
    suffixes = [f".{seat}" for seat in range(seats)] if method_name in ("adalign", "ppo") else METHODS[method_name].suffixes
    names = [args.name + suffix for suffix in suffixes]
    current: list[Policy | None] = [server.policy(name) for name in names]
    nets: list[PolicyNet | None] = []
    models: list[bytes | None] = []
    cursor = None
    for name, policy in zip(names, current):
        if policy is None:
            nets.append(None)
            models.append(None)
            continue
        if policy.game != args.game or policy.variant != variant:
            raise TrainerError(f"policy {name} plays {policy.game} ({policy.variant}), not {args.game} ({variant})")
        try:
            model = server.model(policy)
            models.append(model)
            net = PolicyNet.from_onnx(model)
        except ValueError as error:
            raise TrainerError(f"cannot resume {name}@{policy.version}: {error}") from None
        if (net.inputs, net.actions) != (inputs, actions):
            raise TrainerError(
                f"{name}@{policy.version} reads {net.inputs} numbers and answers {net.actions}; "
                f"{args.game} ({variant}) has {inputs} and {actions}"
            )
        nets.append(net)
        cursor = cursor or policy.dataset_cursor
        say("resumed", name=name, version=policy.version, id=policy.id, cursor=policy.dataset_cursor)
    hidden = tuple(int(h) for h in args.hidden.split(","))
    method: Method = (
        Cfr(models, inputs, actions) if method_name == "cfr"
        else Mmd(nets, inputs, actions, hidden, device) if method_name == "mmd"
        else AdAlign(nets, models, inputs, actions, device, beta=0.0 if method_name == "ppo" else AdAlignConfig.beta)
    )
    for i, name in enumerate(names):
        if current[i] is None:
            initial = current[i] = server.register(
                method.models()[i], name=name, game=args.game, variant=variant, run=run,
                notes="initial: random weights" if method_name != "cfr" else "initial: uniform",
            )
            say("registered", name=name, version=initial.version, id=initial.id, matches=0, decisions=0, seconds=0.0)
    policies: list[Policy] = [p for p in current if p is not None]
    per_version = args.matches_per_version or {"cfr": 100, "mmd": 5000}.get(method_name, 384)
    started = time.monotonic()
    deadline = started + args.minutes * 60
    batch: list[dict[str, np.ndarray]] = []
    seen: set[str] = set()
    quiet_since = time.monotonic()
    total_matches = total_decisions = 0
    spent = {"waiting": 0.0, "learning": 0.0, "registering": 0.0}
    registered = 0
    # Ctrl-C (or a SIGINT from `ludus train`) ends the run before its next step: what is registered stands.
    interrupted: list[int] = []
    signal.signal(signal.SIGINT, lambda number, frame: interrupted.append(number))
    pace = 0.0  # matches a second the server played for the last step: how long the rest of a step should take
    step_started = time.monotonic()
    while (
        time.monotonic() < deadline and (args.versions is None or registered < args.versions) and not interrupted
    ):
        clock = time.monotonic()
        labels = [f"policy:{p.name}@{p.version}" for p in policies]
        table = server.tensors(args.game, variant, cursor)
        cursor = last_cursor(table) or cursor
        if table.num_rows:
            rows = columns(table)
            mine = np.isin(rows["name"], labels)
            if mine.any():
                ours = set(rows["match"][mine])
                keep = np.array([m in ours for m in rows["match"]])
                batch.append({key: value[keep] for key, value in rows.items()})
                seen.update(ours)
                quiet_since = time.monotonic()
        # A step waits for the matches it asked for; a few that never end (an error) do not hold it up for long.
        if len(seen) < per_version and not (seen and time.monotonic() - quiet_since > 10):
            # The server is still playing this version's matches: ask again about when the rest should have ended
            # (asking at once would only slow it down; a fixed 0.1 s was most of a small step's time).
            left = per_version - len(seen)
            time.sleep(min(0.1, max(0.005, left / pace)) if pace else 0.02)
            spent["waiting"] += time.monotonic() - clock
            continue
        spent["waiting"] += time.monotonic() - clock
        clock = time.monotonic()
        data = {key: np.concatenate([b[key] for b in batch]) for key in batch[0]}
        method.step(data, labels, len(seen))
        total_matches += len(seen)
        total_decisions += int(np.isin(data["name"], labels).sum())
        spent["learning"] += time.monotonic() - clock
        clock = time.monotonic()
        policies = [
            server.register(model, name=p.name, game=args.game, variant=variant, parent=p.id, run=run, cursor=cursor)
            for model, p in zip(method.models(), policies)
        ]
        registered += 1
        pace = len(seen) / max(1e-3, clock - step_started)
        step_started = time.monotonic()
        batch, seen = [], set()
        spent["registering"] += time.monotonic() - clock
        say(
            "registered",
            name=args.name,
            # The last name is the policy the method is judged by (the average, or the last seat's).
            version=policies[-1].version,
            id=policies[-1].id,
            matches=total_matches,
            decisions=total_decisions,
            seconds=round(time.monotonic() - started, 2),
            # Where the time went: waiting for the server to play and export, learning, registering.
            spent={key: round(value, 2) for key, value in spent.items()},
        )
    if interrupted:
        say("interrupted", version=policies[-1].version)
    say("done", version=policies[-1].version, id=policies[-1].id, seconds=round(time.monotonic() - started, 2))
