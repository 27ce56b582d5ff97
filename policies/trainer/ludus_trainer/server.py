"""The trainer's view of a Ludus server: the policy registry and the tensors dataset, over HTTP (docs/policies.md,
docs/datasets.md). Every failure is a TrainerError of one sentence."""

from __future__ import annotations

import io
import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq


class TrainerError(Exception):
    """Something the person running the trainer can act on: said in one sentence."""


@dataclass(frozen=True)
class Policy:
    id: str
    name: str
    version: int
    game: str
    variant: str
    config: Any
    input_shape: list[Any]
    output_shape: list[Any]
    dataset_cursor: str | None
    run: str | None

    @staticmethod
    def of(record: dict[str, Any]) -> "Policy":
        return Policy(
            id=record["id"],
            name=record["name"],
            version=record["version"],
            game=record["game"],
            variant=record["variant"],
            config=record["config"],
            input_shape=record["inputShape"],
            output_shape=record["outputShape"],
            dataset_cursor=record.get("datasetCursor"),
            run=record.get("run"),
        )


class Server:
    def __init__(self, url: str, token: str | None = None, timeout: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def _request(self, path: str, data: bytes | None = None, method: str = "GET") -> tuple[bytes, Any]:
        headers = {"authorization": f"Bearer {self.token}"} if self.token else {}
        if data is not None:
            headers["content-type"] = "application/octet-stream"
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.read(), response.headers
        except urllib.error.HTTPError as error:
            body = error.read()
            try:
                message = json.loads(body)["error"]["message"]
            except (ValueError, KeyError, TypeError):
                message = body.decode("utf-8", "replace")[:200] or error.reason
            raise ServerRefusal(error.code, message) from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise TrainerError(f"cannot reach the Ludus server at {self.url}: {reason}") from None

    def _json(self, path: str, data: bytes | None = None, method: str = "GET") -> Any:
        body, _ = self._request(path, data, method)
        return json.loads(body)

    def game(self, game: str) -> dict[str, Any]:
        try:
            return self._json(f"/games/{urllib.parse.quote(game)}")
        except ServerRefusal as refusal:
            raise TrainerError(f"the server has no game {game}: {refusal.message}") from None

    def policy(self, ref: str) -> Policy | None:
        """A registered policy by id, name (its latest version) or name@version; None when there is none."""
        try:
            return Policy.of(self._json(f"/policies/{urllib.parse.quote(ref)}"))
        except ServerRefusal as refusal:
            if refusal.status == 404:
                return None
            raise TrainerError(f"the server refused to show policy {ref}: {refusal.message}") from None

    def model(self, policy: Policy) -> bytes:
        body, _ = self._request(f"/policies/{policy.id}/model")
        return body

    def register(self, model: bytes, **fields: Any) -> Policy:
        """POST /policies: the model with its name, game, variant and lineage (parent, run, cursor, notes)."""
        query = urllib.parse.urlencode(
            {key: (json.dumps(value) if isinstance(value, dict) else value) for key, value in fields.items() if value is not None}
        )
        try:
            return Policy.of(self._json(f"/policies?{query}", data=model, method="POST"))
        except ServerRefusal as refusal:
            raise TrainerError(f"the server refused the new policy version ({refusal.status}): {refusal.message}") from None

    def tensors(self, game: str, variant: str, cursor: str | None) -> pa.Table:
        """The tensors dataset of every match of (game, variant) that ended after `cursor` (all from the start: None)."""
        query = {"game": game, "variant": variant}
        if cursor:
            query["cursor"] = cursor
        try:
            body, _ = self._request(f"/datasets/tensors.parquet?{urllib.parse.urlencode(query)}")
        except ServerRefusal as refusal:
            if refusal.status == 400 and cursor and "cursor" in refusal.message:
                raise TrainerError(
                    f"the dataset cursor {cursor[:24]}… is not one of this server's ({refusal.message}); "
                    "start a new run or give the cursor this store issued"
                ) from None
            raise TrainerError(f"the server refused the tensors dataset: {refusal.message}") from None
        return read_tensors(body)


class ServerRefusal(TrainerError):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message


def read_tensors(data: bytes) -> pa.Table:
    """A tensors.parquet file's table, from its bytes."""
    try:
        return pq.read_table(io.BytesIO(data))
    except (OSError, pa.ArrowInvalid) as error:
        raise TrainerError(f"not a tensors.parquet dataset: {error}") from None


def last_cursor(table: pa.Table) -> str | None:
    """The cursor of the last match in the table: where the next pull resumes."""
    if table.num_rows == 0:
        return None
    cursors = [c for c in table.column("cursor").to_pylist() if c]
    return cursors[-1] if cursors else None
