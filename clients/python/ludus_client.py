"""A small bot client for the Ludus game server's websocket protocol (protocol/frames.ts).

Connect, authenticate, queue for a game and answer each ``turn`` frame with a policy::

    async with LudusClient("ws://127.0.0.1:2567/bot", token) as client:
        results = await client.play("kuhn-poker", policy=lambda obs, legal, turn: random_action(legal), matches=10)

Frames are JSON text, or msgpack binary when ``format="msgpack"`` is asked for and the ``msgpack``
package is importable. A connection that drops mid-match is reopened by itself: the client
authenticates again and resumes the match it was playing.

Needs Python 3.11 and ``websockets`` (10.4 or later); ``msgpack`` is optional.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import math
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import websockets
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

try:
    import msgpack
except ImportError:  # msgpack is optional: JSON frames need nothing beyond the standard library
    msgpack = None

__all__ = [
    "Answer",
    "LudusClient",
    "LudusError",
    "LudusAuthError",
    "LudusConnectionError",
    "MatchResult",
    "Policy",
    "random_action",
    "Withdraw",
    "MSGPACK_AVAILABLE",
]

log = logging.getLogger("ludus_client")

MSGPACK_AVAILABLE: bool = msgpack is not None
"""Whether ``format="msgpack"`` can be honoured in this interpreter."""

Frame = dict[str, Any]
Policy = Callable[[Any, list[Any], Frame], Any | Awaitable[Any]]
"""``policy(observation, legal, turn)`` returns an action (a JSON object such as ``{"type": "bet"}``, or
text such as ``"bet"``), an ``Answer`` (an action with replay fields), a ``Withdraw``, or an awaitable of
one. ``legal`` is the turn's list of action forms and ``turn`` the whole ``turn`` frame; after an illegal
action ``turn["error"]`` holds the server's ``error`` frame."""


@dataclass(frozen=True)
class Answer:
    """An action with free fields the replay keeps beside it (``act.meta``): an LLM's ``prompt`` messages,
    raw ``response`` and ``usage`` land in the replay store and the ``turns`` exports."""

    action: Any
    meta: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Withdraw:
    """Gives up the seat when its player cannot go on (a model endpoint that refuses every request): the
    seat's status becomes ERROR, ``reason`` is kept in the replay, and the match applies its timeout
    policy to the seat at once. The match still ends with its ``match_end``."""

    reason: str

# Error codes that answer an `act` and leave the decision open while retries last.
_RETRYABLE = frozenset({"illegal_action", "malformed_action"})
# Error codes about an `act` that the match has moved past: nothing to do but wait for the next frame.
_STALE = frozenset({"not_your_turn", "stale_sequence", "wrong_sequence", "match_over"})


class LudusError(Exception):
    """The server refused something, with its error ``code`` (see ErrorCode in protocol/frames.ts)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class LudusAuthError(LudusError):
    """The server refused the token (``bad_token``) or the ``auth`` frame."""


class LudusConnectionError(LudusError):
    """The server could not be reached, or the connection was lost and could not be reopened."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__("connection_failed", f"could not connect to {url}: {reason}")
        self.url = url


@dataclass(frozen=True)
class MatchResult:
    """How one match ended, from a ``match_end`` frame."""

    match: str
    seat: int
    returns: list[float]
    statuses: list[str]
    reason: str
    steps: int
    seed: str

    @property
    def my_return(self) -> float:
        """This client's payoff: the return of its own seat."""
        return self.returns[self.seat]


class LudusClient:
    """One authenticated connection to a Ludus bot gateway (``ws://host:port/bot``).

    Use as an async context manager, or call :meth:`connect` and :meth:`close` yourself.
    """

    def __init__(
        self,
        url: str,
        token: str,
        *,
        text: bool = False,
        format: Literal["json", "msgpack"] = "json",
        reconnect_attempts: int = 5,
        reconnect_delay: float = 0.25,
        open_timeout: float = 10.0,
    ) -> None:
        """
        :param url: the gateway's websocket URL, e.g. ``ws://127.0.0.1:2567/bot``.
        :param token: a bot token (``ludus token create``).
        :param text: ask for each observation rendered as text in ``turn["text"]`` (for LLM seats).
        :param format: ``"msgpack"`` for binary msgpack frames when msgpack is importable; JSON text otherwise.
        :param reconnect_attempts: how many times a dropped connection is reopened before giving up.
        :param reconnect_delay: the first wait before reopening; it doubles on each failed attempt, up to 5 s.
        :param open_timeout: seconds allowed for the websocket handshake.
        """
        if format not in ("json", "msgpack"):
            raise ValueError(f'format must be "json" or "msgpack", got {format!r}')
        self.url = url
        self.token = token
        self.text = text
        self.format: Literal["json", "msgpack"] = "msgpack" if format == "msgpack" and MSGPACK_AVAILABLE else "json"
        self.reconnect_attempts = reconnect_attempts
        self.reconnect_delay = reconnect_delay
        self.open_timeout = open_timeout
        self.welcome: Frame | None = None
        """The latest ``welcome`` frame: server version, this bot's id and name, limits, matches to resume."""
        self._ws: websockets.WebSocketClientProtocol | None = None

    async def __aenter__(self) -> LudusClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def connect(self) -> Frame:
        """Opens the connection, sends ``auth`` and returns the ``welcome`` frame.

        :raises LudusConnectionError: the server cannot be reached.
        :raises LudusAuthError: the server refused the token.
        """
        try:
            self._ws = await websockets.connect(self.url, open_timeout=self.open_timeout, max_size=2**24)
        except (OSError, InvalidURI, InvalidHandshake, asyncio.TimeoutError) as e:
            raise LudusConnectionError(self.url, str(e) or type(e).__name__) from e
        auth: Frame = {"type": "auth", "token": self.token}
        if self.text:
            auth["text"] = True
        try:
            await self._send(auth)
            while True:
                frame = await self._recv()
                if frame["type"] == "welcome":
                    self.welcome = frame
                    return frame
                if frame["type"] == "error":
                    await self.close()
                    raise LudusAuthError(frame["code"], frame["message"])
        except ConnectionClosed as e:
            raise LudusConnectionError(self.url, f"the server closed the connection during auth ({e})") from e

    async def close(self) -> None:
        """Closes the connection (a no-op when it is not open)."""
        if self._ws is not None:
            ws, self._ws = self._ws, None
            await ws.close()

    async def play(
        self,
        game: str,
        variant: str | None = None,
        policy: Policy | None = None,
        matches: int = 1,
    ) -> list[MatchResult]:
        """Queues for ``game`` (and ``variant``, or the game's default) ``matches`` times, one match after
        another, answering every turn with ``policy``; returns each match's result in order.

        ``policy(observation, legal, turn)`` defaults to a uniformly random legal action. After an
        illegal action that the server still forgives, the policy is asked again with the server's
        ``error`` frame in ``turn["error"]`` and the updated ``turn["retriesLeft"]``.

        :raises LudusError: the server refused the queue (e.g. ``unknown_game``) or another request.
        :raises LudusConnectionError: the connection dropped and could not be reopened.
        """
        if self._ws is None:
            raise RuntimeError("call connect() (or use `async with`) before play()")
        chosen: Policy = policy if policy is not None else (lambda _obs, legal, _turn: random_action(legal))
        return [await self._play_match(game, variant, chosen) for _ in range(matches)]

    async def _play_match(self, game: str, variant: str | None, policy: Policy) -> MatchResult:
        queue: Frame = {"type": "queue", "game": game}
        if variant is not None:
            queue["variant"] = variant
        match: str | None = None
        turn: Frame | None = None  # the decision being answered, for a retry after an illegal action
        while True:
            try:
                await self._send(queue if match is None else {"type": "resume", "match": match})
                while True:
                    frame = await self._recv()
                    kind = frame["type"]
                    if kind == "error" and "match" not in frame:
                        raise LudusError(frame["code"], frame["message"])
                    if kind == "match_start" and match is None:
                        match = frame["match"]
                    if match is None or frame.get("match") != match:
                        continue  # queued, pong, or a frame about another match
                    if kind == "turn":
                        turn = frame
                        await self._act(policy, turn)
                    elif kind == "error":
                        turn = await self._answer_error(policy, turn, frame)
                    elif kind == "match_end":
                        return MatchResult(
                            match=match,
                            seat=frame["seat"],
                            returns=list(frame["returns"]),
                            statuses=list(frame["statuses"]),
                            reason=frame["reason"],
                            steps=frame["steps"],
                            seed=frame["seed"],
                        )
            except ConnectionClosed as e:
                # Reconnect, then queue again or resume: a resume also answers for a match that ended
                # meanwhile (welcome no longer lists it), with its match_end.
                log.warning("connection to %s lost (%s); reconnecting", self.url, e)
                await self._reconnect()

    async def _act(self, policy: Policy, turn: Frame) -> None:
        decided = await _call_policy(policy, turn)
        if isinstance(decided, Withdraw):
            await self._send({"type": "withdraw", "match": turn["match"], "reason": decided.reason})
            return
        act: Frame = {"type": "act", "match": turn["match"], "seq": turn["seq"], "action": decided}
        if isinstance(decided, Answer):
            act["action"] = decided.action
            if decided.meta is not None:
                act["meta"] = dict(decided.meta)
        await self._send(act)

    async def _answer_error(self, policy: Policy, turn: Frame | None, error: Frame) -> Frame | None:
        """Retries a forgiven illegal action with the policy; returns the decision still open, if any."""
        code = error["code"]
        if code in _RETRYABLE and turn is not None and error.get("seq", turn["seq"]) == turn["seq"]:
            retries = error.get("retriesLeft", 0)
            log.warning("match %s: %s (%d retries left)", error["match"], error["message"], retries)
            if retries > 0:
                retry = {**turn, "error": error, "retriesLeft": retries}
                await self._act(policy, retry)
                return retry
            return None
        if code in _STALE:
            return turn
        raise LudusError(code, error["message"])

    async def _reconnect(self) -> None:
        await self.close()
        delay = self.reconnect_delay
        for attempt in range(1, self.reconnect_attempts + 1):
            await asyncio.sleep(delay)
            try:
                await self.connect()
                return
            except LudusConnectionError as e:
                log.warning("reconnect %d/%d failed: %s", attempt, self.reconnect_attempts, e.message)
                delay = min(delay * 2, 5.0)
        raise LudusConnectionError(self.url, f"the connection was lost and {self.reconnect_attempts} reconnects failed")

    async def _send(self, frame: Frame) -> None:
        assert self._ws is not None
        if self.format == "msgpack":
            await self._ws.send(msgpack.packb(frame, use_bin_type=True))
        else:
            await self._ws.send(json.dumps(frame, separators=(",", ":")))

    async def _recv(self) -> Frame:
        assert self._ws is not None
        message = await self._ws.recv()
        if isinstance(message, bytes):
            if msgpack is None:
                raise LudusError("bad_frame", "the server sent a binary (msgpack) frame and msgpack is not installed")
            return msgpack.unpackb(message, raw=False)
        return json.loads(message)


async def _call_policy(policy: Policy, turn: Frame) -> Any:
    action = policy(turn.get("observation"), list(turn.get("legal", [])), turn)
    return await action if inspect.isawaitable(action) else action


_WORDS = ("deal", "trust", "fair", "share", "cooperate", "maybe", "yes", "no", "you", "me", "together", "split")


def random_action(legal: Sequence[Mapping[str, Any]], rng: random.Random | None = None) -> dict[str, Any]:
    """A uniformly random legal action: a form chosen uniformly from ``legal``, then a value chosen uniformly
    within it (its range, each item's count, a trade's resources). Text forms get a short babble of words.

    Forms are those of games/core/action.ts: ``{"kind": "fixed", "action"}``, ``{"kind": "amount", "type",
    "min", "max", "integer"}``, ``{"kind": "text", "type", "maxLength"}``, ``{"kind": "split", "type",
    "items", "max"}`` and ``{"kind": "exchange", "type", "give", "get", "maxText"}``.
    """
    if not legal:
        raise ValueError("there is no legal action to choose from")
    r = rng or random
    form = r.choice(list(legal))
    kind = form["kind"]
    if kind == "fixed":
        return dict(form["action"])
    if kind == "amount":
        low, high = form["min"], form["max"]
        amount = r.randint(math.ceil(low), math.floor(high)) if form["integer"] else r.uniform(low, high)
        return {"type": form["type"], "amount": amount}
    if kind == "text":
        words = " ".join(r.choice(_WORDS) for _ in range(r.randint(0, 8)))
        return {"type": form["type"], "text": words[: form["maxLength"]]}
    if kind == "split":
        return {"type": form["type"], "take": [r.randint(0, m) for m in form["max"]]}
    if kind == "exchange":
        return {"type": form["type"], "give": _random_bundle(form["give"], r), "get": _random_bundle(form["get"], r)}
    raise ValueError(f"unknown action form kind {kind!r}")


def _random_bundle(most: Mapping[str, int], r: random.Random | Any) -> dict[str, int]:
    """A non-empty random subset of the resources that can be named, each with a count from 1 to its max."""
    names = [name for name, n in most.items() if n >= 1]
    chosen = r.sample(names, r.randint(1, len(names))) if names else []
    return {name: r.randint(1, most[name]) for name in names if name in chosen}
