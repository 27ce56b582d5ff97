import type { ServerResponse } from "node:http";
import {
  exportDataset,
  type ExportFormat,
  exportFormat,
  type ExportProgress,
  fileName,
  FORMAT_INFO,
  FORMATS,
  parseDiscount,
} from "../../db/export/index.ts";
import { parseTensorConfig } from "../../db/export/tensor-spec.ts";
import { parseFilter, QueryError } from "../../db/query.ts";
import type { ReplayStore } from "../../db/store.ts";
import { type ApiRoute, error, pathSegment, send, whileWorking } from "../http.ts";

/**
 * Dataset exports over HTTP (docs/datasets.md): GET /datasets lists the formats, GET /datasets/<format>
 * streams one. The body is written as the store is read, at the pace the client reads it; the final
 * cursor, rows and matches follow the body as HTTP trailers; a client that disconnects stops the export.
 */

/** Trailers sent after a complete body (a body cut short has none). */
export const TRAILERS = { cursor: "x-ludus-cursor", rows: "x-ludus-rows", matches: "x-ludus-matches" } as const;

function listing() {
  return {
    formats: FORMATS.map((name) => ({ name, path: `/datasets/${name}`, ...FORMAT_INFO[name] })),
    parameters: {
      game: "a game id (required by tensors.parquet)",
      version: "a version of the game (with game; tensors.parquet: default the current one)",
      variant: "a variant name (tensors.parquet: default the game's default variant)",
      participant: "a participant's name or token id, in any seat",
      player: "a player as GET /players names it (kind:name, e.g. builtin:tit-for-tat), in any seat",
      model: "a model an LLM seat declared, in any seat",
      opponent: "a player (kind:name) or participant in another seat than the one model/player/participant pick",
      status: "an end reason (completed, forfeit, aborted, error), or the status of the seat model/player/" +
        "participant pick, else of any seat (DONE, ERROR, INVALID, TIMEOUT, DISCONNECTED)",
      from: "matches created at or after this time (ISO 8601 or epoch ms)",
      to: "matches created before this time (ISO 8601 or epoch ms)",
      cursor: "resume after the match this cursor names (from the same format, filters and discount)",
      discount: "γ of return_to_go, in [0, 1] (default 1)",
      config: 'tensors.parquet: config keys over the variant\'s, as JSON (e.g. {"rounds":3}): the shapes to export ' +
        "(matches of other shapes are left out)",
    },
    trailers: Object.values(TRAILERS),
  };
}

/**
 * How long an export waits for its first bytes before it answers 200 and its headers anyway: a store that cannot be
 * read is answered with a 500 saying so when it fails within this, and a slow export still answers at once.
 */
const HEADERS_WITHIN_MS = 500;

/** Resolves once the response may take more (or is gone). */
const writable = (res: ServerResponse): Promise<void> =>
  new Promise((resolve) => {
    if (res.destroyed) return resolve();
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });

async function stream(
  res: ServerResponse,
  format: ExportFormat,
  chunks: AsyncIterable<Uint8Array>,
  last: () => ExportProgress,
) {
  const iterator = chunks[Symbol.asyncIterator]();
  let gone = false;
  res.on("close", () => (gone = !res.writableFinished));
  const pull = () => whileWorking(res, iterator.next());
  const first = pull();
  first.catch(() => {}); // awaited below
  let timer: ReturnType<typeof setTimeout> | undefined;
  const early = await Promise.race([
    first.then(() => true, () => true),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), HEADERS_WITHIN_MS))),
  ]);
  clearTimeout(timer);
  if (early) {
    try {
      await first; // a store that cannot be read is still answered with a status
    } catch (cause) {
      console.error("ludus: dataset export failed:", cause);
      return error(
        res,
        500,
        "export_failed",
        `the replay store could not be read: ${(cause as Error)?.message ?? cause}`,
      );
    }
  }
  res.writeHead(200, {
    "content-type": FORMAT_INFO[format].contentType,
    "content-disposition": `attachment; filename="${fileName(format)}"`,
    "cache-control": "no-store",
    trailer: Object.values(TRAILERS).join(", "),
  });
  res.flushHeaders(); // the client (and any proxy between) knows at once that the export is under way
  try {
    for (let next = await first; !next.done; next = await pull()) {
      if (gone) break;
      if (!res.write(next.value)) await writable(res);
    }
  } catch (cause) {
    // Cut the body short (no final chunk, no trailers) so the client cannot take it for a whole export.
    console.error("ludus: dataset export failed midway:", cause);
    return void res.destroy(cause as Error);
  } finally {
    if (gone) await iterator.return?.();
  }
  if (gone) return;
  const progress = last();
  res.addTrailers({
    [TRAILERS.rows]: String(progress.rows),
    [TRAILERS.matches]: String(progress.matches),
    ...(progress.cursor === null ? {} : { [TRAILERS.cursor]: progress.cursor }),
  });
  res.end();
}

const PATH = /^\/datasets(?:\/([^/]+))?$/;

export function datasetRoutes(store: ReplayStore): ApiRoute {
  return {
    describe: "GET /datasets, GET /datasets/:format",
    handle(req, res, url) {
      const found = PATH.exec(url.pathname.replace(/\/+$/, ""));
      if (!found) return false;
      if (found[1] === undefined) {
        send(res, 200, listing());
        return true;
      }
      const name = pathSegment(res, found[1]);
      if (name === undefined) return true;
      let format: ExportFormat;
      try {
        format = exportFormat(name);
      } catch (cause) {
        if (!(cause instanceof QueryError)) throw cause;
        error(res, 404, "unknown_format", `no dataset format \`${found[1]}\`; formats: ${FORMATS.join(", ")}`);
        return true;
      }
      let progress: ExportProgress = { matches: 0, rows: 0, cursor: null };
      let chunks: AsyncIterable<Uint8Array>;
      try {
        const params = url.searchParams;
        const cursor = params.get("cursor");
        const discount = params.get("discount");
        const config = params.get("config");
        progress = { ...progress, cursor };
        chunks = exportDataset(store, format, {
          filter: parseFilter(params, ["cursor", "discount", "config"]),
          cursor: cursor ?? undefined,
          discount: discount === null ? undefined : parseDiscount(discount),
          config: config === null ? undefined : parseTensorConfig(config),
          onProgress: (p) => (progress = p),
        });
      } catch (cause) {
        if (!(cause instanceof QueryError)) throw cause;
        error(res, 400, "bad_query", cause.message);
        return true;
      }
      if (req.method === "HEAD") {
        res.writeHead(200, { "content-type": FORMAT_INFO[format].contentType }).end();
        return true;
      }
      void stream(res, format, chunks, () => progress);
      return true;
    },
  };
}
