-- A browser seat's key, as the SHA-256 (hex) of the secret its page keeps: one entry per seat, null for seats without
-- one. A restarted server (or the peer taking a match over) lets a page holding the key take its seat back; a
-- Colyseus reconnection token does not outlive its process. Read back only to restore the match; the API and
-- exports never serve it.
ALTER TABLE matches ADD COLUMN seat_keys jsonb;
