"""Ludus matches as rollouts for TRL's ``GRPOTrainer`` (trl 1.x, ``trl/trainer/grpo_trainer.py``).

``GRPOTrainer(rollout_func=...)`` documents the contract: ``rollout_func(prompts, trainer)`` receives this process's
prompts (the dataset's ``prompt`` column, each already repeated ``num_generations`` times) and returns a dict with
``prompt_ids``, ``completion_ids`` and ``logprobs``, one entry per prompt; an ``env_mask`` (1 for the model's tokens,
0 for the environment's) keeps the environment's tokens out of the loss, and every other key is forwarded to the
reward functions as a keyword argument. Here each rollout is a whole match::

    from trl import GRPOConfig, GRPOTrainer
    from ludus.trainers import MatchSpec
    from ludus.trainers.trl import ludus_rollout_func, match_return_reward, rollout_dataset

    spec = MatchSpec("ws://127.0.0.1:2567/bot", token, "kuhn-poker", opponents={1: "strategy:random"})
    trainer = GRPOTrainer(model, reward_funcs=match_return_reward, args=GRPOConfig(...),
                          train_dataset=rollout_dataset(1000), rollout_func=ludus_rollout_func(spec, seed="run-1"))

The prompt's last user message gets the match's first observation (the prompt is the instruction); the model's
reply is the seat's action; each later observation (or the server's refusal of an action) is a user message joined
into the completion with ``env_mask`` 0, so only the model's tokens are trained.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .rollout import INSTRUCTIONS, MatchSpec, SeatRollout, first_messages, group_seed, next_turn_ids, trained_agent

# The trainer's generation settings that say how the seat's replies were sampled, as GRPOTrainer names them.
_SAMPLING = ("temperature", "top_p", "top_k", "min_p", "repetition_penalty", "max_completion_length")

RolloutFunc = Callable[[list[Any], Any], dict[str, Any]]

log = logging.getLogger("ludus.trainers.trl")


@dataclass(frozen=True)
class RolloutProgress:
    """Where one call of the rollout function stands: ``finished`` of its ``matches`` have ended, after ``turns``
    generation batches; the seat has sent ``decisions`` replies, ``tokens`` tokens generated, in ``seconds``. While
    ``generating`` is true a batch for ``waiting`` matches is under way (``seconds`` counts it so far)."""

    step: int
    matches: int
    finished: int
    waiting: int
    turns: int
    decisions: int
    tokens: int
    seconds: float
    generating: bool

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0

    def __str__(self) -> str:
        doing = f", generating turn {self.turns + 1} for {self.waiting}" if self.generating else ""
        return (
            f"step {self.step}: {self.finished}/{self.matches} matches finished, {self.decisions} decisions, "
            f"{self.tokens} tokens in {self.seconds:.1f} s ({self.tokens_per_second:.1f} tokens/s){doing}"
        )


class RolloutTimeout(TimeoutError):
    """A match of the rollout ran past ``match_timeout``: the rollout's matches are ended (the server records the
    unfinished ones ``aborted``) and the training step fails with this, rather than waiting on."""


def ludus_rollout_func(
    spec: MatchSpec,
    *,
    seed: str | None = None,
    match_timeout: float | None = 600.0,
    progress: Callable[[RolloutProgress], None] | None = None,
    progress_every: float = 30.0,
) -> RolloutFunc:
    """A ``rollout_func`` for ``GRPOTrainer`` whose rollouts are matches of ``spec``, played concurrently: each turn,
    the trainer generates the replies of every match waiting for its seat in one batch, through the trainer's own
    generation path (``GRPOTrainer._generate_single_turn``, as TRL's tool-calling loop uses it: transformers'
    ``generate`` with the trainer's ``generation_config``, or vLLM with ``use_vllm``), so ``max_completion_length``
    bounds each of the seat's turns and the completion holds all of them.

    With ``seed``, the ``num_generations`` matches of one GRPO group are seeded alike (``<seed>-<step>-<group>``), so
    the rollouts compared with each other meet the same deal; without it the server draws every match's seed.

    Each match records the trained model as its seat's agent (``trainer.model``'s name, and the trainer's
    ``temperature``, ``top_p``, ``top_k``, ``min_p``, ``repetition_penalty`` and ``max_completion_length``), exported
    as ``participant_model`` and ``participant_sampling``, unless ``spec.agent`` names another.

    Progress (``RolloutProgress``: matches finished, decisions, tokens per second) goes to the ``ludus.trainers.trl``
    logger at INFO and to ``progress`` after every generation batch, and every ``progress_every`` seconds while a
    batch runs (generation runs on a thread of its own, so that the rollout can report and time out meanwhile). A
    match that has not ended ``match_timeout`` seconds after it started (None: no limit) ends the rollout with
    ``RolloutTimeout``, even while a generation is still running (it then runs on in the background, its result
    unused).

    The returned dict adds, per rollout: ``env_mask``; ``match_return`` (the seat's return, for
    ``match_return_reward``); ``ludus_match`` (the server's match id); ``ludus_refused`` (replies the server refused).
    """

    def rollout(prompts: list[Any], trainer: Any) -> dict[str, Any]:
        tokenizer = trainer.processing_class
        eos = tokenizer.eos_token_id
        group = trainer.num_generations if trainer.model.training else trainer.num_generations_eval
        offset = trainer.accelerator.process_index * len(prompts)
        step = trainer.state.global_step
        agent = trained_agent(trainer.model, {key: getattr(trainer, key, None) for key in _SAMPLING})
        rollouts = [SeatRollout(spec, agent) for _ in prompts]
        started = time.monotonic()
        deadlines: list[float] = []
        turns = tokens = 0

        def report(waiting: int, generating: bool) -> None:
            now = RolloutProgress(step, len(rollouts), len(rollouts) - waiting, waiting, turns,
                                  sum(len(match.replies) for match in rollouts), tokens, time.monotonic() - started,
                                  generating)
            log.info("ludus rollout %s", now)
            if progress is not None:
                progress(now)

        def generate(waiting: list[int], contexts: list[list[int]]) -> tuple[Any, Any]:
            late = min(deadlines[i] for i in waiting)
            done = _Background(lambda: trainer._generate_single_turn(contexts, None, {}))
            while not done.ready.wait(max(0.0, min(late - time.monotonic(), progress_every))):
                if time.monotonic() >= late:
                    stalled = [rollouts[i] for i in waiting if deadlines[i] <= time.monotonic()]
                    raise RolloutTimeout(
                        f"{len(stalled)} of {len(rollouts)} matches ({', '.join(str(m.match) for m in stalled)}) "
                        f"had not ended {match_timeout:g} s after they started: the model was still generating turn "
                        f"{turns + 1} for {len(waiting)} matches; {len(rollouts) - len(waiting)} had finished, "
                        f"{sum(len(m.replies) for m in rollouts)} decisions, {tokens} tokens in "
                        f"{time.monotonic() - started:.1f} s. Raise match_timeout, or generate less a turn "
                        "(max_completion_length) or for fewer matches at once (the batch size)"
                    )
                report(len(waiting), True)
            return done.result()

        try:
            prompt_ids: list[list[int]] = []
            for i, (prompt, match) in enumerate(zip(prompts, rollouts)):
                observation = match.start(group_seed(seed, step, (offset + i) // group) if seed is not None else None)
                deadlines.append(time.monotonic() + match_timeout if match_timeout is not None else math.inf)
                messages = first_messages(prompt, observation)
                prompt_ids.append(list(tokenizer.apply_chat_template(messages, add_generation_prompt=True,
                                                                     tokenize=True, return_dict=False)))
            completion_ids: list[list[int]] = [[] for _ in prompts]
            env_mask: list[list[int]] = [[] for _ in prompts]
            logprobs: list[list[float]] = [[] for _ in prompts]
            sampled_logprobs = True
            waiting = list(range(len(prompts)))
            while waiting:
                replies, reply_logprobs = generate(waiting, [prompt_ids[i] + completion_ids[i] for i in waiting])
                turns += 1
                sampled_logprobs = sampled_logprobs and reply_logprobs is not None
                still: list[int] = []
                for k, (i, reply) in enumerate(zip(waiting, replies)):
                    reply = list(reply)
                    tokens += len(reply)
                    completion_ids[i] += reply
                    env_mask[i] += [1] * len(reply)
                    logprobs[i] += list(reply_logprobs[k]) if reply_logprobs is not None else [0.0] * len(reply)
                    message = rollouts[i].answer(tokenizer.decode(reply, skip_special_tokens=True))
                    if message is None:
                        continue
                    # A reply cut off by the length limit is closed as the chat template would close it.
                    joint = ([] if reply and reply[-1] == eos else [eos]) + next_turn_ids(tokenizer, message)
                    completion_ids[i] += joint
                    env_mask[i] += [0] * len(joint)
                    logprobs[i] += [0.0] * len(joint)
                    still.append(i)
                waiting = still
                report(len(waiting), False)
        finally:
            for match in rollouts:
                match.close()
        return {
            "prompt_ids": prompt_ids,
            "completion_ids": completion_ids,
            "logprobs": logprobs if sampled_logprobs else None,
            "env_mask": env_mask,
            "match_return": [match.match_return for match in rollouts],
            "ludus_match": [match.match for match in rollouts],
            "ludus_refused": [match.refused for match in rollouts],
        }

    return rollout


class _Background:
    """A call running on a daemon thread: ``ready`` is set once it has returned or raised."""

    def __init__(self, work: Callable[[], Any]) -> None:
        self.ready = threading.Event()
        self._value: Any = None
        self._error: BaseException | None = None
        self._work = work
        # A daemon, so that a generation that never returns does not keep the process alive after the timeout.
        threading.Thread(target=self._run, name="ludus-generation", daemon=True).start()

    def _run(self) -> None:
        try:
            self._value = self._work()
        except BaseException as error:  # noqa: BLE001 - raised again in the thread that waits
            self._error = error
        finally:
            self.ready.set()

    def result(self) -> Any:
        if self._error is not None:
            raise self._error
        return self._value


def match_return_reward(completions: Sequence[Any], match_return: Sequence[float], **_: Any) -> list[float]:
    """The reward function for ``ludus_rollout_func``'s rollouts: each rollout's return in its match, as the server
    scored it (GRPOTrainer calls reward functions with the completions and the rollout function's extra fields)."""
    if len(match_return) != len(completions):
        raise ValueError(f"{len(match_return)} match returns for {len(completions)} completions")
    return [float(value) for value in match_return]


def rollout_dataset(size: int, instructions: str = INSTRUCTIONS) -> Any:
    """A ``datasets.Dataset`` of ``size`` identical conversational prompts (``instructions`` as the user message): the
    rollouts' data is the matches themselves, and the dataset only says how many to play (one per row and
    generation)."""
    from datasets import Dataset

    if size < 1:
        raise ValueError(f"rollout_dataset needs a size of at least 1, got {size}")
    return Dataset.from_dict({"prompt": [[{"role": "user", "content": instructions}] for _ in range(size)]})
