/**
 * The selfplay bench's baseline: the same stack as the Ludus gateway (`ws` on node:http under Deno,
 * no compression) doing nothing but sending each message back. `--port P`; GET answers "ok".
 */
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import { WebSocketServer } from "ws";

const { values } = parseArgs({ options: { port: { type: "string" }, host: { type: "string", default: "127.0.0.1" } } });

const http = createServer((_req, res) => res.end("ok"));
const wss = new WebSocketServer({ server: http, perMessageDeflate: false });
wss.on("connection", (socket) => {
  socket.on("message", (data, binary) => socket.send(data, { binary }));
});
http.listen(Number(values.port), values.host);
