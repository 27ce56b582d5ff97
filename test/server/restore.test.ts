import { afterEach, describe, expect, it } from "vitest";
import type { ServerFrame, TurnFrame } from "../../protocol/frames.ts";
import { LiveMatches } from "../../server/match/live-matches.ts";
import type { SeatLink } from "../../server/match/match.ts";
import { BACKENDS, openTestStore, type TestStore } from "../support/stores.ts";

/** A seat's connection as the transports give it to a Match, keeping what it was sent. */
function link(): SeatLink & { frames: ServerFrame[] } {
  const frames: ServerFrame[] = [];
  return { frames, text: false, send: (frame) => frames.push(frame) };
}

const lastTurn = (frames: ServerFrame[]) => frames.findLast((f): f is TurnFrame => f.type === "turn")!;

for (const backend of BACKENDS) {
  describe(`restoring unfinished matches from the log (${backend})`, () => {
    let test: TestStore;
    afterEach(() => test.close());

    /** A Leduc match between a remote bot (seat 0) and a built-in, played `decisions` decisions by the bot. */
    async function halfPlayed(decisions: number) {
      test = await openTestStore(backend);
      const live = new LiveMatches({ store: test.store });
      const match = live.create({
        game: "leduc-poker",
        seed: "restore-me",
        seats: [{ kind: "bot", name: "remote", tokenId: "tok" }, { strategy: "random" }],
      });
      const seat = link();
      match.connect(0, seat);
      for (let i = 0; i < decisions && !match.ended; i++) {
        await test.store.writer.drain();
        const turn = lastTurn(seat.frames);
        match.act(0, turn.seq, turn.legal[0].kind === "fixed" ? turn.legal[0].action : "call", undefined, seat);
      }
      await test.store.writer.drain();
      return { match, seat };
    }

    it("rebuilds the match where it stopped: same state, same open decision, built-ins agreeing with the log", async () => {
      const { match, seat } = await halfPlayed(2);
      expect(match.ended).toBe(false);
      const restored = await new LiveMatches({ store: test.store }).restore();
      expect(restored.failed).toEqual([]);
      const [again] = restored.restored;
      expect(again.id).toBe(match.id);
      expect(again.observation(0)).toEqual(match.observation(0));
      expect(again.observation(1)).toEqual(match.observation(1));
      const resumed = link();
      again.connect(0, resumed);
      await test.store.writer.drain();
      expect(resumed.frames[0]).toMatchObject({ type: "match_start", resumed: true });
      expect(lastTurn(resumed.frames).seq).toBe(lastTurn(seat.frames).seq);
      again.abort();
      match.abort();
    });

    it("keeps a withdrawn seat withdrawn: status ERROR, its decisions defaulted, the other seat playing on", async () => {
      test = await openTestStore(backend);
      const live = new LiveMatches({ store: test.store });
      const match = live.create({
        game: "ipd",
        seed: "withdrawn",
        seats: [{ kind: "llm", name: "model", tokenId: "a" }, { kind: "bot", name: "remote", tokenId: "b" }],
      });
      const [model, remote] = [link(), link()];
      match.connect(0, model);
      match.connect(1, remote);
      await test.store.writer.drain();
      match.withdraw(0, "http://127.0.0.1:1/v1/chat/completions: the API key was refused (HTTP 401)", model);
      for (let round = 0; round < 2; round++) {
        await test.store.writer.drain();
        match.act(1, lastTurn(remote.frames).seq, { type: "defect" }, undefined, remote);
      }
      await test.store.writer.drain();
      const restored = await new LiveMatches({ store: test.store }).restore();
      const [again] = restored.restored;
      expect(again.participants().map((p) => p.status)).toEqual(["ERROR", "ACTIVE"]);
      expect(again.resumable(0)).toBe(false);
      const resumed = link();
      again.connect(1, resumed);
      await test.store.writer.drain();
      again.act(1, lastTurn(resumed.frames).seq, { type: "defect" }, undefined, resumed);
      await test.store.writer.drain();
      const rows = (await test.store.steps(match.id)).filter((row) => row.seat === 0);
      expect(rows).toHaveLength(4);
      expect(rows.every((row) => row.defaulted === "withdrawn" && row.action !== null)).toBe(true);
      expect(rows[0].error).toEqual({
        code: "withdrawn",
        message: "http://127.0.0.1:1/v1/chat/completions: the API key was refused (HTTP 401)",
      });
      again.abort();
      match.abort();
    });

    it("closes a match whose log no longer replays, with reason `error`", async () => {
      const { match } = await halfPlayed(2);
      await test.store.sql.query(
        `UPDATE steps SET action = '{"type":"fly"}' WHERE match_id = $1 AND seq = 1`,
        [match.id],
      );
      const restored = await new LiveMatches({ store: test.store }).restore();
      expect(restored.restored).toEqual([]);
      expect(restored.failed[0].id).toBe(match.id);
      await test.store.writer.drain();
      expect(await test.store.match(match.id)).toMatchObject({ endReason: "error", statuses: ["ERROR", "ERROR"] });
      match.abort();
    });
  });
}
