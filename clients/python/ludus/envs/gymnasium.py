"""A Gymnasium environment: one seat of a Ludus game against fixed opponents, each episode a private match on the server.

::

    env = LudusEnv("ws://127.0.0.1:2567/bot", token, "leduc-poker", opponents={1: "strategy:random"})
    observation, info = env.reset(seed=42)
    terminated = False
    while not terminated:
        action = env.action_space.sample(info["action_mask"])
        observation, reward, terminated, truncated, info = env.step(action)
    env.close()

The observation is the seat's information-state tensor (float32, the game's ``observationShape``), actions are the game's
action ids (``Discrete(actionCount)``) and ``info["action_mask"]`` says which are legal now. The reward is the seat's
return, given when the match ends (the steps before it give 0).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..client import ActionId, Frame
from .numeric import NumericFace
from .sync import RENDER_MODES, Decision, LiveMatch, SyncClient, check_render_mode, render

__all__ = ["LudusEnv"]


class LudusEnv(gym.Env[np.ndarray, np.int64]):
    """One seat (``seat``) against ``opponents``, over a Ludus server.

    :param url: the bot gateway, e.g. ``ws://127.0.0.1:2567/bot``.
    :param token: a bot token.
    :param game: a game with a numeric face for ``variant`` (its default when None).
    :param opponents: the other seats: ``{seat: "strategy:<name>" | "policy:<name>" | "open"}``; seats not named play
        ``"strategy:random"``. An ``"open"`` seat is for a remote bot: ``reset`` hands the match's invite to
        ``on_invite`` and then waits until the seat is taken (the bot sends ``join`` with the invite).
    :param config: overrides of the variant's config that keep its tensor shape and action count.
    :param text: also ask for the server's text of each decision, in ``info["text"]``.
    :param client_options: more keyword arguments for ``LudusClient`` (``format``, ``reconnect_attempts``,
        ``restart_wait``, ...).
    :raises LudusError: an unknown game or variant, a variant with no numeric face, a refused token.
    :raises LudusConnectionError: the server cannot be reached.
    """

    metadata = {"render_modes": RENDER_MODES}
    MAX_SKIPPED = 100
    """How many matches in a row ``reset`` lets end before the seat acts before it gives up."""

    def __init__(
        self,
        url: str,
        token: str,
        game: str = "kuhn-poker",
        *,
        opponents: Mapping[int, str] | None = None,
        seat: int = 0,
        variant: str | None = None,
        config: Mapping[str, Any] | None = None,
        text: bool = False,
        on_invite: Callable[[str], None] | None = None,
        render_mode: str | None = None,
        client_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.render_mode = check_render_mode(render_mode)
        self.face = NumericFace.of(url, game, variant)
        if not 0 <= seat < self.face.seats:
            raise ValueError(f"seat {seat} is not a seat of {game}: seats are 0 to {self.face.seats - 1}")
        named = {int(s): spec for s, spec in (opponents or {}).items()}
        if seat in named or "self" in named.values():
            raise ValueError(
                f"opponents name the other seats than {seat}, each a strategy, a policy or open; "
                "for every seat through one env use ludus.envs.pettingzoo"
            )
        self.seat = seat
        self.opponents = {s: named.get(s, "strategy:random") for s in range(self.face.seats) if s != seat}
        self.config = dict(config) if config is not None else None
        self.on_invite = on_invite
        self.observation_space = self.face.observation_space()
        self.action_space = spaces.Discrete(self.face.actions)
        self._client = SyncClient(url, token, numeric=True, text=text, client_options=client_options)
        self.match: LiveMatch | None = None
        """The match of the current episode: ``match.id`` (its id in the replay store), ``match.invite``."""
        self._decision: Decision | None = None
        self._last = self.face.zeros()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """A new private match (``seed`` is the match's seed: same seed, same actions, same match); a match still going
        is abandoned. Returns the seat's first observation.

        A match can end before the seat acts (the opponent folds the first hand of hold'em): then the episode plays
        on into the next match, seeded ``<seed>/1``, ``<seed>/2``, ... (drawn by the server without ``seed``), until one
        gives the seat a decision, so ``reset`` always returns a state the seat acts in; ``info["skipped"]`` lists
        the ids of the matches that ended first.

        :raises RuntimeError: ``MAX_SKIPPED`` matches in a row ended before the seat had a decision.
        """
        super().reset(seed=seed)
        skipped: list[str] = []
        while True:
            self.match = self._client.create(
                self.face.game,
                variant=self.face.variant,
                config=self.config,
                seat=self.seat,
                opponents=self.opponents,
                seed=None if seed is None else f"{seed}/{len(skipped)}" if skipped else str(seed),
            )
            if self.on_invite is not None and "open" in self.opponents.values():
                self.on_invite(self.match.invite)
            self._decision = self.match.next()
            if self._decision is not None:
                break
            skipped.append(self.match.id)
            if len(skipped) == self.MAX_SKIPPED:
                raise RuntimeError(
                    f"{len(skipped)} matches of {self.face.game} in a row ended before seat {self.seat} had a decision "
                    f"(the last: {self.match.id}); check the opponents and the config"
                )
        self.face.check(self.match.starts[self.seat])
        self._last = self.face.tensor(self._decision.turn)
        info = self._info(self._decision.turn)
        if skipped:
            info["skipped"] = skipped
        return self._last.copy(), info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Plays action id ``action``. An id the server refuses (not in ``info["action_mask"]``) returns the same
        decision again with the server's message in ``info["error"]`` (reward 0); after the match's retries (2 by
        default) its conduct policy plays the default action for the seat (check or fold in poker)."""
        if self.match is None or self._decision is None:
            raise RuntimeError("call reset() first (and again once an episode has terminated)")
        verdict = self.match.answer(ActionId(action))
        self._decision = self.match.next()
        if self._decision is None:
            [result] = self.match.results or []
            info = {"action_mask": self.face.mask(None), "returns": list(result.returns),
                    "statuses": list(result.statuses), "reason": result.reason}
            if verdict is not None and verdict["type"] == "error":
                info["error"] = verdict["message"]
            return self._last.copy(), float(result.my_return), True, False, info
        self._last = self.face.tensor(self._decision.turn)
        return self._last.copy(), 0.0, False, False, self._info(self._decision.turn)

    def render(self) -> str | None:
        """In ``render_mode`` ``"ansi"`` (returned) or ``"human"`` (printed): the server's text for the open decision (``text=True``), or the match's outcome."""
        return render(self.render_mode, self._decision, self.match)

    def close(self) -> None:
        """Abandons a match still going and closes the connection."""
        self._client.close()

    def _info(self, turn: Frame) -> dict[str, Any]:
        info: dict[str, Any] = {"action_mask": self.face.mask(turn)}
        if "error" in turn:
            info["error"] = turn["error"]["message"]
        if "text" in turn:
            info["text"] = turn["text"]
        return info
