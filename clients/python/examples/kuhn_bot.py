#!/usr/bin/python3
"""A Kuhn poker bot for a Ludus server: plays one of Kuhn's equilibrium strategies by hand strength.

    /usr/bin/python3 clients/python/examples/kuhn_bot.py --url ws://127.0.0.1:2567/bot --token "$LUDUS_TOKEN"

Prints one line per match and a final summary. Exit codes: 0 success; 1 the server could not be
reached, refused the token or the queue, or dropped the connection for good; 2 bad usage.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ludus import (  # noqa: E402 (the package sits one folder up when not installed)
    MSGPACK_AVAILABLE,
    LudusAuthError,
    LudusClient,
    LudusConnectionError,
    LudusError,
    MatchResult,
    random_action,
)

# Kuhn's equilibrium family (Kuhn 1950) with bluffing rate 1/6: the probability of putting a chip in
# (bet or call) by card and by what happened before in the hand. The king always calls and usually
# bets, the jack never calls and bets only as a bluff, and the queen never bets and sometimes calls.
AGGRESSION: dict[tuple[str, ...], dict[str, float]] = {
    (): {"J": 1 / 6, "Q": 0.0, "K": 1 / 2},  # opening: bet J as a bluff, K sometimes slow-plays
    ("check",): {"J": 1 / 3, "Q": 0.0, "K": 1.0},  # after a check: bluff J, bet K for value
    ("bet",): {"J": 0.0, "Q": 1 / 3, "K": 1.0},  # facing an opening bet
    ("check", "bet"): {"J": 0.0, "Q": 1 / 2, "K": 1.0},  # checked, then faced a bet
}


class KuhnPolicy:
    """Chooses bet/call or check/fold from the observation's card and the hand's actions so far."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def __call__(self, observation: dict[str, Any], legal: list[dict[str, Any]], turn: dict[str, Any]) -> dict[str, Any]:
        history = tuple(observation.get("actions", []))
        odds = AGGRESSION.get(history, {}).get(observation.get("card") or "")
        if odds is None:
            return random_action(legal, self.rng)
        wanted = ("bet", "call") if self.rng.random() < odds else ("check", "fold")
        for form in legal:
            if form["kind"] == "fixed" and form["action"]["type"] in wanted:
                return form["action"]
        return random_action(legal, self.rng)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Play Kuhn poker on a Ludus server.")
    parser.add_argument("--url", required=True, help="the gateway's websocket URL, e.g. ws://127.0.0.1:2567/bot")
    parser.add_argument("--token", default=os.environ.get("LUDUS_TOKEN"), help="bot token (default: $LUDUS_TOKEN)")
    parser.add_argument("--matches", type=int, default=10, help="matches to play, one after another (default 10)")
    parser.add_argument("--variant", help="kuhn-poker variant, e.g. standard or textarena (default: the game's)")
    parser.add_argument("--format", choices=("json", "msgpack"), default="json", help="frame encoding (default json)")
    parser.add_argument("--seed", type=int, help="seed for the policy's coin flips")
    args = parser.parse_args(argv)
    if not args.token:
        parser.error("a token is required: pass --token or set LUDUS_TOKEN")
    if not args.url.startswith(("ws://", "wss://")):
        parser.error(f"--url must be a ws:// or wss:// URL, got {args.url!r}")
    if args.matches < 1:
        parser.error(f"--matches must be at least 1, got {args.matches}")
    if args.format == "msgpack" and not MSGPACK_AVAILABLE:
        parser.error("--format msgpack needs the msgpack package (apt install python3-msgpack)")
    return args


async def play(args: argparse.Namespace) -> list[MatchResult]:
    policy = KuhnPolicy(random.Random(args.seed))
    async with LudusClient(args.url, args.token, format=args.format) as client:
        results: list[MatchResult] = []
        for _ in range(args.matches):
            [result] = await client.play("kuhn-poker", args.variant, policy, matches=1)
            print(
                f"match {result.match} seat {result.seat} return {result.my_return:+g} "
                f"({result.reason}, {result.steps} steps)",
                flush=True,
            )
            results.append(result)
        return results


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="kuhn_bot: %(message)s")
    try:
        results = asyncio.run(play(args))
    except LudusConnectionError as e:
        print(f"kuhn_bot: {e.message}", file=sys.stderr)
        return 1
    except LudusAuthError as e:
        print(f"kuhn_bot: the server at {args.url} refused the token: {e.message} ({e.code})", file=sys.stderr)
        return 1
    except LudusError as e:
        print(f"kuhn_bot: the server at {args.url} refused a request: {e.message} ({e.code})", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 1
    mean = sum(r.my_return for r in results) / len(results)
    print(f"{len(results)} matches, mean return {mean:+.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
