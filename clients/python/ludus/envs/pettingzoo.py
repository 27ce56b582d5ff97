"""A PettingZoo AEC environment whose every episode is a private match on a Ludus server, every seat played through it.

::

    env = LudusAECEnv("ws://127.0.0.1:2567/bot", token, "kuhn-poker")
    env.reset(seed=42)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        action = None if termination or truncation else env.action_space(agent).sample(observation["action_mask"])
        env.step(action)
    env.close()

Agents are ``player_0`` ... (seat ``n`` is ``player_n``). ``observe(agent)`` is ``{"observation": the seat's
information-state tensor (float32, the game's ``observationShape``), "action_mask": int8 of ``actionCount``}``; actions
are the game's action ids. Rewards are the match's returns, given when it ends.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.conversions import aec_to_parallel

from ..client import ActionId
from .numeric import NumericFace
from .sync import RENDER_MODES, Decision, LiveMatch, SyncClient, catalogue, check_render_mode, render

__all__ = ["LudusAECEnv", "parallel_env"]


class LudusAECEnv(AECEnv):
    """Every seat of a Ludus game through one PettingZoo AEC env (self-play over one connection).

    :param url: the bot gateway, e.g. ``ws://127.0.0.1:2567/bot``.
    :param token: a bot token; it holds every seat of each match.
    :param game: a game with a numeric face for ``variant`` (its default when None; ``GET /games`` lists the shapes).
    :param config: overrides of the variant's config that keep its tensor shape and action count.
    :param text: also ask for the server's text of each decision, in ``infos[agent]["text"]``.
    :param client_options: more keyword arguments for ``LudusClient`` (``format``, ``reconnect_attempts``,
        ``restart_wait``, ...).
    :raises LudusError: an unknown game or variant, a variant with no numeric face, a refused token.
    :raises LudusConnectionError: the server cannot be reached.
    """

    metadata = {"name": "ludus_aec_v0", "render_modes": RENDER_MODES, "is_parallelizable": False}
    """``is_parallelizable`` is the game's: true where every seat moves at once in every step (``parallel_env``)."""

    def __init__(
        self,
        url: str,
        token: str,
        game: str = "kuhn-poker",
        *,
        variant: str | None = None,
        config: Mapping[str, Any] | None = None,
        text: bool = True,
        render_mode: str | None = None,
        client_options: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.render_mode = check_render_mode(render_mode)
        self.face = NumericFace.of(url, game, variant)
        self.metadata = {**self.metadata, "is_parallelizable": self.face.simultaneous}
        self.config = dict(config) if config is not None else None
        self.possible_agents = [f"player_{seat}" for seat in range(self.face.seats)]
        observation = spaces.Dict({"observation": self.face.observation_space(), "action_mask": self.face.mask_space()})
        self.observation_spaces = {agent: observation for agent in self.possible_agents}
        self.action_spaces: dict[str, spaces.Discrete] = {
            agent: spaces.Discrete(self.face.actions) for agent in self.possible_agents
        }
        self._client = SyncClient(url, token, numeric=True, text=text, client_options=client_options)
        self.match: LiveMatch | None = None
        """The match of the current episode: ``match.id`` is its id in the replay store."""
        self._decision: Decision | None = None
        self._checked = False
        """Whether the match's numeric face was found to be the spaces'."""
        self._tensors: dict[str, np.ndarray] = {}
        self.agents: list[str] = []

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new private match with every seat ``"self"``; ``seed`` is the match's seed (same seed, same actions: same
        match). A match still going is abandoned (its seats withdrawn)."""
        self.match = self._client.create(
            self.face.game,
            variant=self.face.variant,
            config=self.config,
            seat=0,
            opponents={seat: "self" for seat in range(1, self.face.seats)},
            seed=None if seed is None else str(seed),
        )
        self.agents = list(self.possible_agents)
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._tensors = {agent: self.face.zeros() for agent in self.agents}
        self._checked = False
        self._advance()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        decision = self._decision
        turn = decision.turn if decision is not None and self.possible_agents[decision.seat] == agent else None
        return {"observation": self._tensors[agent].copy(), "action_mask": self.face.mask(turn)}

    def step(self, action: Any) -> None:
        """Plays action id ``action`` for ``agent_selection``. An id the server refuses (not in the mask) leaves the same
        agent to act again, with the server's message in ``infos[agent]["error"]``; after the match's retries
        (2 by default) its conduct policy plays the default action for the seat."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if self.match is None or self._decision is None:
            raise RuntimeError("call reset() first")
        self._cumulative_rewards[agent] = 0.0
        verdict = self.match.answer(ActionId(action))
        refusal = verdict["message"] if verdict is not None and verdict["type"] == "error" else None
        self._advance()
        if refusal is not None and agent in self.infos:
            self.infos[agent]["error"] = refusal
        self._accumulate_rewards()

    def render(self) -> str | None:
        """In ``render_mode`` ``"ansi"`` (returned) or ``"human"`` (printed): the server's text for the seat to act (``text=True``), or the match's outcome."""
        return render(self.render_mode, self._decision, self.match)

    def close(self) -> None:
        """Abandons a match still going and closes the connection."""
        self._client.close()

    def _advance(self) -> None:
        """Waits for the next decision (or the end) and sets ``agent_selection``, the observation, infos and rewards."""
        assert self.match is not None
        self._decision = self.match.next()
        if self._decision is not None:
            seat = self._decision.seat
            agent = self.possible_agents[seat]
            if not self._checked:
                self.face.check(self.match.starts[seat])
                self._checked = True
            turn = self._decision.turn
            self._tensors[agent] = self.face.tensor(turn)
            self.infos[agent] = {"legal": turn["legal"], **({"text": turn["text"]} if "text" in turn else {})}
            self.agent_selection = agent
            return
        [result, *_] = self.match.results or []
        for seat, agent in enumerate(self.possible_agents):
            self.rewards[agent] = float(result.returns[seat])
            self.terminations[agent] = True
            self.infos[agent] = {
                "status": result.statuses[seat],
                "reason": result.reason,
                "returns": list(result.returns),
            }


def parallel_env(url: str, token: str, game: str = "kuhn-poker", **options: Any) -> Any:
    """The same environment in PettingZoo's parallel API (``aec_to_parallel``), for games whose every seat moves at
    once in every step (the prisoner's dilemma without talk: ``GET /games`` marks such variants ``simultaneous``), so
    that each ``step`` takes every agent's action for one step of the match.

    :raises ValueError: the game (``variant``) takes turns, naming the games and variants that do not; play those
        through ``LudusAECEnv``.
    """
    face = NumericFace.of(url, game, options.get("variant"))
    if not face.simultaneous:
        supported = [
            f"{info['id']} ({', '.join(name for name, v in info['variants'].items() if v.get('simultaneous'))})"
            for info in catalogue(url)
            if any(v.get("simultaneous") for v in info["variants"].values())
        ]
        raise ValueError(
            f"parallel_env plays games whose every seat moves at once in every step: {', '.join(supported) or 'none'} "
            f"on this server; {game} ({face.variant}) takes turns, so play it through LudusAECEnv"
        )
    return aec_to_parallel(LudusAECEnv(url, token, game, **options))
