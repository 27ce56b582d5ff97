-- What learners need from the store: exports that follow the order matches end in, seed groups, and what
-- each seat was offered and shown at a decision.

-- The order matches end in: an incremental export resumes after the last `end_seq` it read, so a long
-- match that ends after a shorter one created later is never skipped. Assigned by the trigger below the
-- moment a row first has an `ended_at`, whichever statement writes it (group commit or closeInError).
CREATE SEQUENCE match_end_seq;
ALTER TABLE matches ADD COLUMN end_seq bigint;
WITH ordered AS (
  SELECT id, row_number() OVER (ORDER BY ended_at, created_at, id) AS n FROM matches WHERE ended_at IS NOT NULL
)
UPDATE matches SET end_seq = ordered.n FROM ordered WHERE matches.id = ordered.id;
SELECT setval('match_end_seq', (SELECT coalesce(max(end_seq), 0) + 1 FROM matches), false);
CREATE UNIQUE INDEX matches_by_end ON matches (end_seq) WHERE end_seq IS NOT NULL;

CREATE FUNCTION matches_end_seq() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.ended_at IS NOT NULL AND NEW.end_seq IS NULL THEN
    NEW.end_seq := nextval('match_end_seq');
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER matches_end_seq BEFORE INSERT OR UPDATE ON matches
  FOR EACH ROW EXECUTE FUNCTION matches_end_seq();

-- A seed group: matches of the same start played several times (group-relative baselines), named by
-- whoever created them.
ALTER TABLE matches ADD COLUMN group_id text;
CREATE INDEX matches_by_group ON matches (group_id) WHERE group_id IS NOT NULL;

-- What the seat was offered: the legal action forms, and the legal action ids (the numeric face's mask,
-- as the ids set in it) where the game has one for this config.
ALTER TABLE steps ADD COLUMN offered json;
ALTER TABLE steps ADD COLUMN legal_ids json;
-- The text the seat was shown, exactly (its turn frame's `text`); null for a seat shown JSON only.
ALTER TABLE steps ADD COLUMN prompt text;
