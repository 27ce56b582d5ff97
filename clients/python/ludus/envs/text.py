"""A text environment in TextArena's shape, for LLM loops: each episode is a private match on a Ludus server.

::

    env = LudusTextEnv("ws://127.0.0.1:2567/bot", token, "kuhn-poker", opponents={1: "strategy:nash"})
    env.reset(seed=7)
    done = False
    while not done:
        player_id, observation = env.get_observation()
        done, info = env.step(my_model(observation))   # text such as "bet" or "[Bet]"; info["error"] if refused
    rewards, game_info = env.close()

The game runs on the server: the observation is the server's own text for the seat (the rules, what the seat has seen,
what is legal), the action is read by the game's own parser, and the match is recorded like any other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..frames import AgentInfo
from .sync import Decision, LiveMatch, SyncClient, game_info, variant_info

__all__ = ["LudusTextEnv"]


class LudusTextEnv:
    """TextArena's ``reset`` / ``get_observation`` / ``step`` / ``close`` over a Ludus server.

    :param url: the bot gateway, e.g. ``ws://127.0.0.1:2567/bot``.
    :param token: a bot token (an ``llm`` token gets LLM clocks: 60 s a decision; a ``bot`` token 5 s).
    :param game: a game id (``GET /games`` lists them).
    :param variant: the game's variant (its default when None); ``config`` overrides the variant's config.
    :param opponents: seats played by others: ``{seat: "strategy:<name>" | "policy:<name>" | "open"}``. Every seat
        not named is played through this environment (all of them when None: self-play through one env).
    :param seat: the first seat played through the environment (the match's creator).
    :param agent: who plays the environment's seats, for their record and the datasets (``participant_model``, ...):
        ``{"model": ..., "endpoint": ..., "sampling": {...}}``, each optional, checked by the server (``LudusClient``'s
        ``agent``).
    :param group: a seed group every episode's match is recorded (and exported) with.
    :param client_options: more keyword arguments for ``LudusClient`` (``format``, ``reconnect_attempts``,
        ``restart_wait``, ...).
    """

    def __init__(
        self,
        url: str,
        token: str,
        game: str = "kuhn-poker",
        *,
        variant: str | None = None,
        config: Mapping[str, Any] | None = None,
        opponents: Mapping[int, str] | None = None,
        seat: int = 0,
        agent: AgentInfo | None = None,
        group: str | None = None,
        client_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.url = url
        self.token = token
        self.game = game
        self.variant = variant
        self.config = dict(config) if config is not None else None
        self.opponents = {int(k): v for k, v in (opponents or {}).items()}
        if seat in self.opponents:
            raise ValueError(f"seat {seat} is played through the environment; name opponents for the other seats")
        self.seat = seat
        self.agent = agent
        self.group = group
        self.client_options = dict(client_options or {})
        self._seats = int(variant_info(game_info(url, game), variant)["seats"])
        self._client: SyncClient | None = None
        self.match: LiveMatch | None = None
        """The match of the current episode (its ``id``, ``invite`` for open seats, ``starts``, ``results``)."""
        self._refused: dict[int, int] = {}
        self._introduced: set[int] = set()
        """The seats whose observation has carried the rules this episode (TextArena's observations carry only
        what is new to the player, the game's prompt first)."""

    def reset(self, num_players: int | None = None, seed: int | str | None = None) -> None:
        """Starts a new episode: a private match (an episode still going is abandoned, its seats withdrawn).

        :param num_players: the match's number of seats, when ``config`` makes it other than the variant's (the
            Donor Game's ``agents``); by default the variant's.
        :param seed: the match's seed: the same seed and the same actions give the same match.
        :raises LudusError: the server refused the match (``bad_config``, ``bad_strategy``, ...), with its message.
        """
        seats = self._seats if num_players is None else num_players
        if not 0 <= self.seat < seats:
            raise ValueError(f"seat {self.seat} is not a seat of a {seats}-player match")
        named = {str(s): spec for s, spec in self.opponents.items()}
        others = {str(s): named.get(str(s), "self") for s in range(seats) if s != self.seat}
        if self._client is None:
            self._client = SyncClient(
                self.url, self.token, text=True, agent=self.agent, client_options=self.client_options
            )
        self.match = self._client.create(
            self.game,
            variant=self.variant,
            config=self.config,
            seat=self.seat,
            opponents={**named, **others},
            seed=None if seed is None else str(seed),
            group=self.group,
        )
        self._refused = {s: 0 for s in self.match.seats}
        self._introduced = set()

    def get_observation(self) -> tuple[int, str]:
        """The seat to act and its observation: the rules (in the seat's first observation of the episode), the
        server's text for the seat, and what is legal (after a refused action, the server's reason too). Blocks until
        a seat of this environment must act.

        :raises RuntimeError: the episode has ended (``step`` returned ``done``), or ``reset`` was not called.
        """
        decision = self._decision()
        turn = decision.turn
        start = self._live().starts.get(decision.seat, {})
        parts = [f"You are player {decision.seat}.", turn.get("text", "")]
        if decision.seat not in self._introduced:
            self._introduced.add(decision.seat)
            parts[0] = f"{parts[0]} The rules:\n{start.get('rules', '')}".rstrip()
        if "error" in turn:
            parts.append(f"Your last action was refused: {turn['error']['message']}")
        parts.append(f"Legal now: {turn['legalText']}")
        return decision.seat, "\n\n".join(part for part in parts if part)

    def step(self, action: str) -> tuple[bool, dict[str, Any]]:
        """Plays ``action`` (text, read by the game's parser; a JSON action also works) for the seat to act.

        Returns ``done`` (the match has ended) and ``info``: ``{"action": <the action as the game read it>}``, or,
        when the server refused it, ``{"error": <its message>, "code": ..., "retries_left": n}``: with retries
        left the same player acts again; after the last one the match's conduct policy played for the seat.
        """
        decision = self._decision()
        match = self._live()
        verdict = match.answer(action)
        info: dict[str, Any] = {}
        if verdict is not None and verdict["type"] == "ack":
            info["action"] = verdict["action"]
        elif verdict is not None:
            self._refused[decision.seat] += 1
            info = {"error": verdict["message"], "code": verdict["code"], "retries_left": verdict.get("retriesLeft", 0)}
        match.next()
        return match.over, info

    def close(self) -> tuple[dict[int, float], dict[int, dict[str, Any]]]:
        """Ends the episode and closes the connection (``reset`` opens another). Returns ``rewards`` (every seat's
        return, as the game scores it) and ``game_info`` per seat: ``status``, ``reason`` (how the match ended),
        ``match`` (its id in the replay store), ``seed``, ``steps``, ``culprit``, ``played_here`` (whether this
        environment played the seat) and ``refused`` (its actions the server refused). An episode still going is
        abandoned first: the server ends it, ``aborted``."""
        rewards: dict[int, float] = {}
        info: dict[int, dict[str, Any]] = {}
        try:
            if self.match is not None:
                self.match.poll()
            # A match still waiting for its open seats has no result: closing the connection ends it.
            if self.match is not None and (self.match.starts or "open" not in self.opponents.values()):
                if not self.match.over:
                    self.match.abandon("the environment was closed before the match ended")
                [result, *_] = self.match.wait_end()
                for seat, value in enumerate(result.returns):
                    rewards[seat] = value
                    info[seat] = {
                        "status": result.statuses[seat],
                        "reason": result.reason,
                        "match": result.match,
                        "seed": result.seed,
                        "steps": result.steps,
                        "culprit": result.culprit,
                        "played_here": seat in self.match.seats,
                        "refused": self._refused.get(seat, 0),
                    }
        finally:
            if self._client is not None:
                self._client.close()
                self._client = None
        return rewards, info

    def _live(self) -> LiveMatch:
        if self.match is None:
            raise RuntimeError("call reset() first")
        return self.match

    def _decision(self) -> Decision:
        decision = self._live().next()
        if decision is None:
            raise RuntimeError("the match has ended: call close() for the rewards, or reset() for another episode")
        return decision

