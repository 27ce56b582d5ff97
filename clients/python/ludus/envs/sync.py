"""A blocking face of the async client, for environments (Gymnasium, PettingZoo, TextArena) whose APIs are synchronous.

A ``SyncClient`` runs a ``LudusClient`` on its own event loop in a background thread and plays one private match at a
time, one decision at a time: ``match = client.create(...)``, then ``decision = match.next()`` blocks until a seat
played through this client must act (or the match ended), and ``match.answer(action)`` sends the action and waits for
the server's verdict. Every wait ends: with the next decision, the match's end, or an exception when the server is
gone (the client's reconnects failed) or refused something.
"""

from __future__ import annotations

import asyncio
import functools
import json
import queue
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..client import (
    Frame,
    LudusClient,
    LudusConnectionError,
    LudusError,
    MatchResult,
    PrivateMatch,
    Withdraw,
)
from ..frames import AgentInfo

__all__ = [
    "Decision", "LiveMatch", "RENDER_MODES", "SyncClient", "catalogue", "check_render_mode", "game_info", "render",
    "variant_info",
]


@dataclass
class Decision:
    """A decision open for one of the seats played through the client."""

    seat: int
    turn: Frame
    """The server's ``turn`` frame; after a refused answer it carries the refusal in ``turn["error"]``."""
    _answer: asyncio.Future[Any] = field(repr=False)


@dataclass(frozen=True)
class _Turn:
    turn: Frame
    answer: asyncio.Future[Any]


@dataclass(frozen=True)
class _Frame:
    frame: Frame


@dataclass(frozen=True)
class _Ended:
    match: str
    results: list[MatchResult] | None
    failure: BaseException | None


_Event = _Turn | _Frame | _Ended


class SyncClient:
    """A ``LudusClient`` on a background thread, with blocking calls; one live match at a time.

    :raises LudusConnectionError: the server cannot be reached.
    :raises LudusAuthError: the server refused the token.
    """

    def __init__(
        self,
        url: str,
        token: str,
        *,
        text: bool = False,
        numeric: bool = False,
        agent: AgentInfo | None = None,
        client_options: Mapping[str, Any] | None = None,
    ) -> None:
        """:param agent: who plays behind the token, recorded with every seat (``LudusClient``'s ``agent``).
        :param client_options: more keyword arguments for ``LudusClient``: ``format``, ``reconnect_attempts``,
        ``reconnect_delay``, ``open_timeout``, ``restart_wait`` (how long to wait for a server that closed to restart,
        300 s by default, before raising)."""
        self.url = url
        self._events: queue.Queue[_Event] = queue.Queue()
        self._abandoned: set[str] = set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="ludus-client", daemon=True)
        self._thread.start()
        self.client = LudusClient(
            url,
            token,
            text=text,
            numeric=numeric,
            agent=agent,
            on_frame=self._on_frame,
            **dict(client_options or {}),
        )
        self.live: LiveMatch | None = None
        self._closed = False
        try:
            self.welcome: Frame = self._run(self.client.connect())
        except BaseException:
            self._stop_loop()
            raise

    def create(
        self,
        game: str,
        *,
        variant: str | None = None,
        config: Mapping[str, Any] | None = None,
        seat: int | None = 0,
        opponents: Mapping[int, str] | Mapping[str, str] | None = None,
        seed: str | None = None,
        agents: Mapping[int, AgentInfo] | Mapping[str, AgentInfo] | None = None,
        group: str | None = None,
    ) -> LiveMatch:
        """Opens a private match (see ``LudusClient.create``, with its ``agents`` and ``group``); the seat and every
        ``"self"`` opponent are played through the returned ``LiveMatch``. A match still live is abandoned first (its seats withdrawn).

        :raises LudusError: the server refused the match, with its code and message.
        """
        if self._closed:
            raise RuntimeError("this SyncClient is closed")
        if self.live is not None and not self.live.over:
            self.live.abandon("the environment started another match")
        private: PrivateMatch = self._run(
            self.client.create(
                game,
                variant=variant,
                config=config,
                seat=seat,
                opponents=opponents,
                seed=seed,
                agents=agents,
                group=group,
                policy=self._policy,
            )
        )
        self.live = LiveMatch(self, private)
        asyncio.run_coroutine_threadsafe(self._watch(private), self._loop)
        return self.live

    def close(self) -> None:
        """Abandons a live match (its seats withdrawn), closes the connection and stops the thread. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self.live is not None and not self.live.over:
            self.live.abandon("the environment was closed")
        try:
            self._run(self.client.close())
        finally:
            self._stop_loop()

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ---- on the client's event loop ----

    def _on_frame(self, frame: Frame) -> None:
        if frame.get("type") in ("ack", "error", "match_start"):
            self._events.put(_Frame(frame))

    async def _policy(self, _observation: Any, _legal: list[Any], turn: Frame) -> Any:
        if turn["match"] in self._abandoned:
            return Withdraw("the environment abandoned the match")
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._events.put(_Turn(turn, answer))
        return await answer

    async def _watch(self, private: PrivateMatch) -> None:
        try:
            results = await private.results()
        except BaseException as failure:  # noqa: BLE001 - handed to the thread that waits on the match
            self._events.put(_Ended(private.match, None, failure))
            return
        self._events.put(_Ended(private.match, results, None))

    # ---- plumbing ----

    def _run(self, work: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(work, self._loop).result()

    def _settle(self, answer: asyncio.Future[Any], value: Any) -> None:
        def settle() -> None:
            if not answer.done():
                answer.set_result(value)

        self._loop.call_soon_threadsafe(settle)

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()


class LiveMatch:
    """A private match played through a ``SyncClient``: its decisions one at a time, then its results."""

    def __init__(self, owner: SyncClient, private: PrivateMatch) -> None:
        self._owner = owner
        self.id = private.match
        self.invite = private.invite
        self.seats: list[int] = list(private.seats)
        """The seats played through this client."""
        self.starts: dict[int, Frame] = {}
        """Each seat's ``match_start`` frame (rules, participants, the numeric face), as it came."""
        self.pending: list[Decision] = []
        """Open decisions, the one to answer first at the front."""
        self.results: list[MatchResult] | None = None
        """One result per seat of ``seats`` once the match has ended."""
        self._failure: BaseException | None = None

    @property
    def over(self) -> bool:
        return self.results is not None or self._failure is not None

    def next(self) -> Decision | None:
        """Blocks until a seat of ours must act (that decision) or the match has ended (None).

        :raises LudusError: the server refused a seat, or the connection was lost for good.
        """
        while not self.pending and not self.over:
            self._take(self._owner._events.get())
        self._raise_failure()
        return self.pending[0] if self.pending else None

    def answer(self, action: Any) -> Frame | None:
        """Answers the decision ``next()`` returned with ``action`` (anything a policy may return: text, JSON, an
        ``ActionId``) and waits for the server's verdict: its ``ack`` (``ack["action"]`` is the action as the game
        read it) or its ``error`` (``code``, ``message``, ``retriesLeft``); None if the match ended first. After a
        refusal with retries left, ``next()`` gives the same seat's decision again, with the refusal in
        ``turn["error"]``; after the last one the match's conduct policy has played for the seat."""
        if not self.pending:
            raise RuntimeError("no decision is open: call next() first (and not after the match has ended)")
        decision = self.pending.pop(0)
        seq = decision.turn["seq"]
        self._owner._settle(decision._answer, action)
        verdict: Frame | None = None
        while verdict is None and not self.over:
            event = self._owner._events.get()
            frame = event.frame if isinstance(event, _Frame) else None
            if frame is not None and frame.get("match") == self.id and frame.get("seq") == seq:
                verdict = frame
            else:
                self._take(event)
        # A refusal with retries left brings the same decision back: wait for it, so that it comes first.
        while verdict is not None and verdict.get("retriesLeft", 0) > 0 and not self.pending and not self.over:
            self._take(self._owner._events.get())
        self._raise_failure()
        return verdict

    def abandon(self, reason: str) -> None:
        """Gives up every seat of ours (``withdraw``): the server ends the match once no player is left."""
        self._owner._abandoned.add(self.id)
        for decision in self.pending:
            self._owner._settle(decision._answer, Withdraw(reason))
        self.pending.clear()

    def wait_end(self) -> list[MatchResult]:
        """Blocks until the match has ended; its results. Every open decision must have been answered or abandoned."""
        while not self.over:
            self._take(self._owner._events.get())
        self._raise_failure()
        assert self.results is not None
        return self.results

    def poll(self) -> None:
        """Takes in what has arrived so far (``starts``, decisions, the end), without waiting."""
        while True:
            try:
                event = self._owner._events.get_nowait()
            except queue.Empty:
                return
            self._take(event)

    def _take(self, event: _Event) -> None:
        if isinstance(event, _Turn):
            if event.turn["match"] != self.id or self.id in self._owner._abandoned:
                # A seat of a match given up: its player leaves.
                self._owner._settle(event.answer, Withdraw("the environment abandoned the match"))
                return
            decision = Decision(event.turn["seat"], event.turn, event.answer)
            # A retry of a refused answer goes first: the same player acts again.
            self.pending.insert(0 if "error" in event.turn else len(self.pending), decision)
        elif isinstance(event, _Ended):
            if event.match == self.id:
                self.results, self._failure = event.results, event.failure
        elif event.frame.get("type") == "match_start" and event.frame["match"] == self.id:
            self.starts.setdefault(event.frame["seat"], event.frame)

    def _raise_failure(self) -> None:
        if self._failure is not None:
            raise self._failure


@functools.lru_cache(maxsize=64)
def game_info(url: str, game: str, timeout: float = 10.0) -> dict[str, Any]:
    """The server's catalogue entry for ``game`` (``GET /games/<id>``: variants with their seats, observation shapes and
    action counts, strategies), found from the bot gateway's URL (``ws://host:port/bot`` -> ``http://host:port``).
    Asked once per server and game (a trainer makes an environment per rollout); read it, never change it.

    :raises LudusError: ``unknown_game``, with the server's message (it lists the games).
    :raises LudusConnectionError: the server cannot be reached.
    """
    info: dict[str, Any] = _http_json(url, f"games/{urllib.parse.quote(game, safe='')}", timeout)
    return info


@functools.lru_cache(maxsize=16)
def catalogue(url: str, timeout: float = 10.0) -> list[dict[str, Any]]:
    """Every game's catalogue entry (``GET /games``), as ``game_info`` gives one. Asked once per server.

    :raises LudusConnectionError: the server cannot be reached.
    """
    games: list[dict[str, Any]] = _http_json(url, "games", timeout)["games"]
    return games


def _http_json(url: str, path: str, timeout: float) -> Any:
    """``GET <path>`` of the HTTP API of the server whose bot gateway is ``url``, as JSON."""
    parts = urllib.parse.urlsplit(url)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme)
    if scheme is None:
        raise ValueError(f"the server's URL must be ws:// or wss://, got {url!r}")
    base = parts.path.rsplit("/bot", 1)[0] if parts.path.endswith("/bot") else parts.path.rstrip("/")
    address = urllib.parse.urlunsplit((scheme, parts.netloc, f"{base}/{path}", "", ""))
    try:
        with urllib.request.urlopen(address, timeout=timeout) as response:
            return json.load(response)
    except urllib.error.HTTPError as e:
        try:
            refusal = json.load(e)["error"]
            code, message = refusal["code"], refusal["message"]
        except (ValueError, KeyError, TypeError):
            code, message = f"http_{e.code}", f"{address} answered HTTP {e.code}"
        raise LudusError(code, message) from None
    except (OSError, ValueError) as e:
        raise LudusConnectionError(url, f"{address}: {e}") from e


def variant_info(info: Mapping[str, Any], variant: str | None) -> dict[str, Any]:
    """The catalogue's entry for ``variant`` of a game (its default when None): ``seats``, ``observationShape``,
    ``actionCount`` (or ``numericFace``, why it has none).

    :raises LudusError: ``bad_config`` naming the variants, as the server would.
    """
    name = variant if variant is not None else info["defaultVariant"]
    variants = info["variants"]
    if name not in variants:
        raise LudusError(
            "bad_config", f"{info['id']} has no variant {name!r}; variants: {', '.join(sorted(variants))}"
        )
    return {"name": name, **variants[name]}



RENDER_MODES = ["human", "ansi"]
"""What the environments' ``render()`` offers: ``"ansi"`` returns the text, ``"human"`` prints it."""


def check_render_mode(render_mode: str | None) -> str | None:
    if render_mode not in (None, *RENDER_MODES):
        raise ValueError(f"render_mode is None, {' or '.join(map(repr, RENDER_MODES))}, got {render_mode!r}")
    return render_mode


def render(render_mode: str | None, decision: Decision | None, match: LiveMatch | None) -> str | None:
    """An environment's ``render()``: the server's text for the open decision (its observation when the client did not
    ask for text), or the match's outcome once it ended; returned in ``"ansi"`` mode, printed in ``"human"`` mode."""
    if render_mode is None:
        return None
    if decision is not None:
        shown = str(decision.turn.get("text", decision.turn["observation"]))
    elif match is not None and match.results:
        result = match.results[0]
        shown = f"match {result.match} {result.reason}: returns {result.returns}"
    else:
        shown = ""
    if render_mode == "human":
        print(shown)
        return None
    return shown
