-- What a restarted server needs to honour what it told players, and what a fault leaves behind.

-- A private match's invite, so the link keeps working after a restart. Read back only to restore the
-- match; the API never serves it (it is a capability).
ALTER TABLE matches ADD COLUMN invite text;
-- Why a match ended with reason `error`: a fault in the server, or a write the store refused.
ALTER TABLE matches ADD COLUMN error text;
-- The seat's input exactly as sent (e.g. the text "raise to 300") when it differs from the canonical
-- `action` it was read as: a resend after a restart is recognised by it.
ALTER TABLE steps ADD COLUMN input json;
