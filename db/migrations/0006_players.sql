-- Everyone who can sit at a table, and the tokens bots and LLM agents connect with.

-- A player as ratings name it: `kind:name` (a policy by its exact version, `policy:kuhn-cfr@4`). People are
-- their display name, bots and LLM agents their token's name, built-ins their strategy. A row appears when the
-- player is first seated (group commit writes it with the match) or when a token is made for it.
CREATE TABLE players (
  id          text PRIMARY KEY,
  -- human | bot | llm | builtin | policy
  kind        text NOT NULL,
  name        text NOT NULL,
  -- What names it beyond its name, as last seen: an LLM's model and endpoint, a policy's id and version, a
  -- built-in's strategy with its argument.
  details     jsonb NOT NULL DEFAULT '{}',
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX players_by_kind ON players (kind, id);

-- Everyone already seated in a stored match: details as last seen, since when as first seen.
INSERT INTO players (id, kind, name, details, created_at)
SELECT DISTINCT ON (id) id, kind, name, details, min(created_at) OVER (PARTITION BY id) FROM (
  SELECT CASE WHEN starts_with(s->>'name', (s->>'kind') || ':') THEN s->>'name' ELSE (s->>'kind') || ':' || (s->>'name') END AS id,
    s->>'kind' AS kind, s->>'name' AS name,
    jsonb_strip_nulls(jsonb_build_object('model', s->'model', 'endpoint', s->'endpoint', 'strategy', s->'strategy',
      'policyId', s->'policyId', 'policyVersion', s->'policyVersion')) AS details,
    m.created_at
  FROM matches m, jsonb_array_elements(m.seats) s
  WHERE coalesce(s->>'name', '') <> ''
) seated
ORDER BY id, created_at DESC;

-- Bot and LLM tokens (and admin tokens, which never play): never the secret, only its SHA-256. A token reads
-- `ludus_<id>_<secret>`; the id finds the row. Kept here, not in a file, so every server on a shared store
-- knows every token and a revocation reaches them all.
CREATE TABLE tokens (
  id           text PRIMARY KEY,
  name         text NOT NULL,
  -- bot | llm | admin
  kind         text NOT NULL,
  hash         text NOT NULL,
  -- Live matches and waiting tickets it may hold at once.
  max_matches  integer NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  revoked_at   timestamptz
);
-- One live token per name: a name is a player, and its ratings are the name's.
CREATE UNIQUE INDEX tokens_live_name ON tokens (name) WHERE revoked_at IS NULL;
