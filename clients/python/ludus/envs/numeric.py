"""The numeric face as arrays, shared by the PettingZoo and Gymnasium environments: spaces from the server's catalogue,
tensors and action masks from ``turn`` frames (docs/protocol.md, "The numeric face")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from ..client import Frame, LudusError
from .sync import game_info, variant_info


@dataclass(frozen=True)
class NumericFace:
    """A game variant's tensor shape, action count and seats, as ``GET /games/<id>`` lists them, and whether every
    seat moves at once in every step (``simultaneous``)."""

    game: str
    variant: str
    seats: int
    shape: tuple[int, ...]
    actions: int
    simultaneous: bool = False

    @staticmethod
    def of(url: str, game: str, variant: str | None) -> NumericFace:
        """Asks the server. :raises LudusError: ``unknown_game``, an unknown variant, or a variant with no numeric face."""
        info = variant_info(game_info(url, game), variant)
        if "observationShape" not in info:
            raise LudusError("bad_config", f"{game} ({info['name']}) has no numeric face: {info.get('numericFace')}")
        return NumericFace(game, info["name"], int(info["seats"]), tuple(info["observationShape"]),
                           int(info["actionCount"]), bool(info.get("simultaneous", False)))

    def observation_space(self) -> spaces.Box:
        # Tensors hold counts and amounts as well as one-hots (chips in hold'em): no bound is promised.
        return spaces.Box(-np.inf, np.inf, self.shape, np.float32)

    def mask_space(self) -> spaces.Box:
        return spaces.Box(0, 1, (self.actions,), np.int8)

    def check(self, start: Mapping[str, Any]) -> None:
        """A match's ``match_start.numeric`` must be the face the spaces were made from: a ``config`` that changes the
        shape (more rounds, more agents) cannot be played through spaces fixed before the first match.

        :raises LudusError: ``bad_config``, saying what differs.
        """
        numeric = start.get("numeric") or {}
        if "numericFace" in numeric:
            raise LudusError("bad_config", f"this match has no numeric face: {numeric['numericFace']}")
        got = (tuple(numeric.get("observationShape", ())), numeric.get("actionCount"))
        if got != (self.shape, self.actions):
            raise LudusError(
                "bad_config",
                f"this match's numeric face is shape {list(got[0])} with {got[1]} actions, but the spaces are "
                f"{self.game} {self.variant}'s: shape {list(self.shape)} with {self.actions} actions; use a variant "
                "(or a config) that keeps the variant's shape",
            )

    def zeros(self) -> np.ndarray:
        return np.zeros(self.shape, np.float32)

    def tensor(self, turn: Frame) -> np.ndarray:
        return np.asarray(turn["tensor"], np.float32).reshape(self.shape)

    def mask(self, turn: Frame | None) -> np.ndarray:
        mask = np.zeros(self.actions, np.int8)
        if turn is not None:
            mask[list(turn["legalIds"])] = 1
        return mask
