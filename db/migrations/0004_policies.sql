-- The policy registry: trained ONNX policies, each a numbered version of a name, with what a seat needs to
-- play it (the game, variant and config it was trained on, the encoder and tensor shapes it expects) and
-- where it came from (its parent policy, the trainer's run, how far into the dataset it had read).

CREATE TABLE policies (
  id              text PRIMARY KEY,
  name            text NOT NULL,
  -- 1, 2, 3, ... per name.
  version         integer NOT NULL,
  game            text NOT NULL,
  game_version    integer NOT NULL,
  variant         text NOT NULL,
  config          jsonb NOT NULL,
  -- The numeric face's encoding the inputs follow (the game's tensor encoding as of this version).
  encoder_version integer NOT NULL,
  -- ONNX shapes, a dimension a number or a symbolic name: ["batch", 11].
  input_shape     jsonb NOT NULL,
  output_shape    jsonb NOT NULL,
  -- Of `model`, so a copy anywhere can be checked against the registry.
  sha256          text NOT NULL,
  bytes           integer NOT NULL,
  -- The ONNX file. Listings and lookups never read it (a large value lives out of line, in TOAST).
  model           bytea NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  -- The policy it was trained from. Not a foreign key: the lineage stays recorded after a parent is removed.
  parent          text,
  -- The trainer's run id.
  run             text,
  -- The export cursor the trainer had read up to.
  dataset_cursor  text,
  notes           text,
  UNIQUE (name, version)
);
CREATE INDEX policies_by_game ON policies (game);
