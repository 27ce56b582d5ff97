import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { liveRoutes } from "../../server/api/live.ts";
import { type RunningServer, startHttpServer } from "../../server/http.ts";
import { LiveMatches } from "../../server/match/live-matches.ts";

/** GET /live and GET /invites/:code: the lobby's watch list and what an invite link leads to. */
describe("the live matches API", () => {
  const matches = new LiveMatches({ lingerMs: 0 });
  let server: RunningServer;
  beforeAll(async () => {
    server = await startHttpServer({ port: 0, host: "127.0.0.1" }, { routes: [liveRoutes(matches)] });
  });
  afterAll(async () => {
    matches.suspendAll();
    await server?.close();
  });
  const get = async (path: string) => {
    const res = await fetch(`${server.url}${path}`);
    return { status: res.status, body: await res.json() };
  };

  it("lists the matches being played, by game, with only public facts", async () => {
    const open = matches.createPrivate({ game: "kuhn-poker", opponents: { "1": "open" } });
    matches.createPrivate({ game: "ipd", opponents: { "1": "open" } });
    const { status, body } = await get("/live?game=kuhn-poker");
    expect(status).toBe(200);
    expect(body.matches).toHaveLength(1);
    expect(body.matches[0]).toMatchObject({
      id: open.match.id,
      game: "kuhn-poker",
      title: "Kuhn poker",
      phase: "waiting",
      openSeats: [0, 1],
    });
    expect(JSON.stringify(body)).not.toContain(open.match.invite);
    expect((await get("/live")).body.matches).toHaveLength(2);
  });

  it("says which match an invite is for, and why one cannot be used", async () => {
    const { match } = matches.createPrivate({ game: "tic-tac-toe", opponents: { "1": "open" } });
    const invite = match.invite;
    expect((await get(`/invites/${invite}`)).body).toMatchObject({ id: match.id, game: "tic-tac-toe" });
    for (const code of ["no-such-invite", match.id]) {
      const { status, body } = await get(`/invites/${code}`);
      expect(status, code).toBe(404);
      expect(body.error).toMatchObject({ code: "unknown_invite", message: expect.stringMatching(/no open invite/) });
    }
    match.abort();
    expect((await get(`/invites/${invite}`)).status).toBe(404);
  });

  it("refuses unknown and repeated query parameters", async () => {
    for (const path of ["/live?gmae=ipd", "/live?game=ipd&game=kuhn-poker", "/invites/x?seat=0"]) {
      const { status, body } = await get(path);
      expect(status, path).toBe(400);
      expect(body.error.code).toBe("bad_query");
    }
  });
});
