-- The end sequence in commit order. An incremental export reads `end_seq > cursor`; with several writers on one
-- PostgreSQL store (a cluster, `serve` beside `tournament`), a transaction that took a number and committed after one
-- that took a later number would be skipped by every reader that read in between. So taking a number takes a
-- transaction-long advisory lock first: from then until it commits, no other transaction can take one, and numbers
-- become visible in the order they were taken. Writers hold it only from their first match end to their commit (a
-- group-commit batch is one statement).
CREATE OR REPLACE FUNCTION matches_end_seq() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.ended_at IS NOT NULL AND NEW.end_seq IS NULL THEN
    PERFORM pg_advisory_xact_lock(7415282);
    NEW.end_seq := nextval('match_end_seq');
  END IF;
  RETURN NEW;
END
$$;
