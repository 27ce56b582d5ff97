import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { games as registry } from "../../games/registry.ts";
import { type RunningServer, ServeError, startHttpServer } from "../../server/http.ts";

describe("the HTTP API", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startHttpServer({ port: 0, host: "127.0.0.1" });
  });
  afterAll(() => server.close());

  it("answers GET /health", async () => {
    const res = await fetch(`${server.url}/health`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/application\/json/);
    expect(await res.json()).toMatchObject({ status: "ok", name: "ludus", games: registry.length });
  });

  it("publishes the registry at GET /games and GET /games/:id", async () => {
    const { games } = await (await fetch(`${server.url}/games`)).json();
    expect(games.map((g: { id: string }) => g.id)).toEqual(registry.map((g) => g.id));
    const ipd = games[0];
    expect(ipd).toMatchObject({ id: "ipd", version: 1, seats: { min: 2, max: 2 }, defaultVariant: "classic" });
    expect(ipd.config.properties.rounds).toMatchObject({ type: "integer", default: 10 });
    expect(ipd.strategies.map((s: { name: string }) => s.name)).toContain("tit-for-tat");
    const one = await (await fetch(`${server.url}/games/donor-game`)).json();
    expect(one.variants).toHaveProperty("costly-punishment");
  });

  it("explains unknown routes, games and methods", async () => {
    const missing = await fetch(`${server.url}/games/chess`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).error).toEqual({
      code: "unknown_game",
      message: `no game \`chess\`; games: ${registry.map((g) => g.id).join(", ")}`,
    });
    const nowhere = await fetch(`${server.url}/nowhere`);
    expect(nowhere.status).toBe(404);
    expect((await nowhere.json()).error.message).toMatch(/routes: GET \/health, GET \/games/);
    const post = await fetch(`${server.url}/games`, { method: "POST", body: "{}" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    await post.body?.cancel();
  });

  it("refuses a port that is taken, with a sentence that says what to do", async () => {
    await expect(startHttpServer({ port: server.port, host: "127.0.0.1" })).rejects.toThrow(ServeError);
    await expect(startHttpServer({ port: server.port, host: "127.0.0.1" })).rejects.toThrow(
      `port ${server.port} is already in use on 127.0.0.1; choose another with --port`,
    );
  });
});
