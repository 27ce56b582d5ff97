"""Rollouts for LLM trainers whose episodes are Ludus matches: the model plays one seat through
``ludus.envs.text.LudusTextEnv``, the server plays the others, and the seat's return is the reward.

- ``ludus.trainers.trl``: TRL's ``GRPOTrainer`` (``rollout_func`` and a reward function);
- ``ludus.trainers.verl``: verl's agent loop (``AgentLoopBase``);
- ``ludus.trainers.openrlhf``: OpenRLHF's agent (``AgentInstanceBase``).

Each module imports its trainer's packages only when it is used.
"""

from .rollout import INSTRUCTIONS, MatchSpec, SeatRollout

__all__ = ["INSTRUCTIONS", "MatchSpec", "SeatRollout"]
