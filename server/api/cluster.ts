import { checkParams } from "../../db/query.ts";
import type { Cluster } from "../cluster/cluster.ts";
import { type ApiRoute, respond } from "../http.ts";

/**
 * The match directory over HTTP (docs/cluster.md): the server processes sharing this store, whether each one's
 * lease runs, where it is reached and how many unfinished matches it plays; and which of them answered.
 */
export function clusterRoutes(cluster: Cluster): ApiRoute {
  return {
    describe: "GET /cluster",
    handle(_req, res, url) {
      if (url.pathname.replace(/\/+$/, "") !== "/cluster") return false;
      respond(res, async () => {
        checkParams(url.searchParams, []);
        return {
          self: { node: cluster.node, epoch: cluster.epoch },
          shared: cluster.state.shared,
          nodes: await cluster.directory(),
        };
      });
      return true;
    },
  };
}
