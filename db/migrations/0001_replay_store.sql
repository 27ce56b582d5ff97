-- The replay store: one row per match (its header and, once known, its result) and an append-only
-- log of decisions. A match is (game, version, config, seed, the decisions in `seq` order): enough to
-- re-simulate it exactly, which is how the server restores unfinished matches and how
-- `ludus replay verify` checks the record.

CREATE TABLE matches (
  id            text PRIMARY KEY,
  game          text NOT NULL,
  game_version  integer NOT NULL,
  variant       text NOT NULL,
  config        jsonb NOT NULL,
  seed          text NOT NULL,
  -- One entry per seat: {kind, name, tokenId?, strategy?, model?, policyVersion?}.
  seats         jsonb NOT NULL,
  conduct       jsonb NOT NULL,
  statuses      jsonb NOT NULL,
  returns       jsonb,
  end_reason    text,
  culprit       integer,
  steps         integer NOT NULL DEFAULT 0,
  created_at    timestamptz NOT NULL,
  started_at    timestamptz,
  ended_at      timestamptz
);
CREATE INDEX matches_by_time ON matches (created_at, id);
CREATE INDEX matches_by_game ON matches (game, variant, created_at, id);
CREATE INDEX matches_unfinished ON matches (created_at, id) WHERE ended_at IS NULL;
CREATE INDEX matches_by_seat ON matches USING gin (seats jsonb_path_ops);

-- The decision's JSON columns are `json`, not `jsonb`: they are written and read whole, never searched, and
-- `json` keeps the text as the server wrote it (the game's key order) and reads out several times faster.
CREATE TABLE steps (
  match_id     text NOT NULL,
  -- The decision's sequence number, as in the `turn` and `ack` frames: 1, 2, 3, ... without gaps.
  seq          integer NOT NULL,
  -- The game step the decision belongs to; seats moving simultaneously share one.
  turn         integer NOT NULL,
  seat         integer NOT NULL,
  -- What the seat saw when it was asked (observe(state, seat)).
  observation  json  NOT NULL,
  -- The action applied; null when the match ended before the seat moved (forfeit, abort).
  action       json ,
  -- Whether the action is the seat's own legal choice (false when the conduct policy chose it).
  legal        boolean NOT NULL,
  -- The last refusal ({code, message}) when the seat sent an illegal action.
  error        json ,
  -- Every refused attempt before the decision: [{input, code, message, meta?}].
  attempts     json  NOT NULL DEFAULT '[]',
  -- Why the conduct policy moved for the seat: timeout, illegal, released; null when it did not.
  defaulted    text,
  latency_ms   real NOT NULL,
  -- What the seat attached to its act: an LLM's prompt, raw response and token counts.
  meta         json ,
  -- The step's rewards, per seat, on the decision that completed the step; null on the others.
  rewards      json ,
  -- The process that wrote the row: a retry after a lost reply recognises its own rows by it.
  writer       text NOT NULL,
  at           timestamptz NOT NULL,
  PRIMARY KEY (match_id, seq)
);
