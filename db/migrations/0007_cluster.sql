-- Several server processes sharing one store: which process plays which live match.

-- The cluster this store is: the name its processes share Redis under, so that the processes of another store on
-- the same Redis never meet them.
CREATE TABLE cluster (id text NOT NULL);
INSERT INTO cluster (id) VALUES (substr(md5(random()::text || clock_timestamp()::text), 1, 16));

-- A server process, by its node id (stable across its restarts), with the epoch of its current life. It holds
-- a lease it renews; once the lease lapsed, a peer may take the process's matches (and marks the life taken over).
-- A life taken over is never renewed: the process must join again, as a new epoch. One whose lease lapsed but that
-- nobody took over (its store was away, or it has no peers) renews it and plays on.
CREATE TABLE nodes (
  id           text PRIMARY KEY,
  epoch        integer NOT NULL,
  -- Where its HTTP API, web app and gateway are reached.
  url          text NOT NULL,
  -- Whether it shares the cluster's Redis (a process without it plays alone, and no peer may share its store).
  shared       boolean NOT NULL,
  -- Its browser rooms' process id in Colyseus's matchmaker, so a match's room is made where the match is played.
  rooms        text,
  lease_until  timestamptz NOT NULL,
  started_at   timestamptz NOT NULL,
  -- When a peer took this life's matches over; null while none did.
  taken_at     timestamptz
);

-- The live match's owner: the node playing it and the epoch that took it. Only the owner writes its records, and
-- only while no peer took its life over (group commit checks), so a stalled owner cannot add to a log a peer took.
-- Null for a match written before this migration, or by a process that is not a server.
ALTER TABLE matches ADD COLUMN owner text;
ALTER TABLE matches ADD COLUMN owner_epoch integer;
-- A lapsed owner's matches are found through matches_unfinished: it holds only the matches still in play, so an
-- index by owner would cost every match's insert to save scanning a few thousand entries when a process dies.
-- A process that does not play a match finds who does by its invite; most matches have none, and cost nothing here.
CREATE INDEX matches_by_invite ON matches (invite) WHERE ended_at IS NULL AND invite IS NOT NULL;
