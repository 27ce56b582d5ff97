-- The league: tournaments, the matches they scheduled, and ratings kept up to date as rated matches end.

-- A tournament as it was asked for; its schedule follows from these fields alone (formats are deterministic),
-- so a tournament interrupted by a crash resumes from its row and its slots.
CREATE TABLE tournaments (
  id          text PRIMARY KEY,
  game        text NOT NULL,
  variant     text NOT NULL,
  config      jsonb NOT NULL,
  -- round-robin | swiss | gauntlet | duplicate (a round robin of duplicate deals)
  format      text NOT NULL,
  -- Each deal played twice with the seats swapped (always so for the duplicate format).
  duplicate   boolean NOT NULL,
  -- Player specs in the order given (a gauntlet's first one meets the field).
  players     jsonb NOT NULL,
  -- Matches per pairing and seating (swiss: per pairing and seating in each round).
  matches     integer NOT NULL,
  rounds      integer,
  seed        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  ended_at    timestamptz
);

-- One scheduled match of a tournament: which players sit where, on which seed. A slot's match is replaced
-- (same seed, same seats) when the tournament resumes after a crash that left it unfinished; the primary key
-- keeps one match per slot, so no match is counted twice.
CREATE TABLE tournament_slots (
  tournament_id text NOT NULL,
  slot          integer NOT NULL,
  round         integer NOT NULL,
  -- Player indexes into the tournament's `players`, in seat order.
  seats         jsonb NOT NULL,
  seed          text NOT NULL,
  match_id      text NOT NULL,
  PRIMARY KEY (tournament_id, slot)
);
CREATE INDEX tournament_slots_by_match ON tournament_slots (match_id);

-- Whether a match counts for ratings: the public queue's and tournaments' do; practice (private matches, seed
-- groups) and self-play for training do not. Fixed when the match is created.
ALTER TABLE matches ADD COLUMN rated boolean NOT NULL DEFAULT false;
-- Rated matches in the order they ended: what a starting server rates that an earlier one did not get to.
CREATE INDEX matches_rated_by_end ON matches (end_seq) WHERE rated;

-- Online ratings (OpenSkill's Plackett–Luce model, mu and sigma) per player, game and variant.
CREATE TABLE ratings (
  player      text NOT NULL,
  game        text NOT NULL,
  variant     text NOT NULL,
  mu          double precision NOT NULL,
  sigma       double precision NOT NULL,
  matches     integer NOT NULL,
  updated_at  timestamptz NOT NULL,
  PRIMARY KEY (player, game, variant)
);

-- Each player's rating after each rated match: the rating-history charts.
CREATE TABLE rating_history (
  -- The order updates were applied in (a batch's rows share one transaction time).
  seq       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  player    text NOT NULL,
  game      text NOT NULL,
  variant   text NOT NULL,
  match_id  text NOT NULL,
  mu        double precision NOT NULL,
  sigma     double precision NOT NULL,
  at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX rating_history_by_player ON rating_history (player, game, variant, seq);

-- The matches already applied to `ratings`: a match is rated at most once, whoever retries.
CREATE TABLE rated_matches (
  match_id  text PRIMARY KEY,
  rated_at  timestamptz NOT NULL DEFAULT now()
);

-- The Donor Game's cultural evolution (Vallinder & Hughes 2024): a population plays a generation (one match),
-- the better half survives, new agents copy the survivors' strategies; repeated for `generations`, over `seeds`.
CREATE TABLE evolutions (
  id           text PRIMARY KEY,
  config       jsonb NOT NULL,
  -- The first generation's strategies, by agent.
  population   jsonb NOT NULL,
  generations  integer NOT NULL,
  seeds        integer NOT NULL,
  mutation     double precision NOT NULL,
  seed         text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  ended_at     timestamptz
);

-- One generation of one run: its match, every agent (name, strategy, resources, share donated) and the means.
-- Written as the match starts (the means null) and again as it ends: a resumed evolution finds a generation an
-- interruption cut off, and closes its match.
CREATE TABLE evolution_generations (
  evolution_id      text NOT NULL,
  run               integer NOT NULL,
  generation        integer NOT NULL,
  match_id          text NOT NULL,
  agents            jsonb NOT NULL,
  mean_resources    double precision,
  donation_fraction double precision,
  PRIMARY KEY (evolution_id, run, generation)
);
