// A stand-in for an OpenAI-compatible model server that takes its time:
// every chat completion is answered only after a long pause, so a browser
// test can press Stop while a reply is being written. The edge of the world
// we do not own, scripted; Countersign talks to it over real HTTP.
//   node slow-model/serve.mjs [port] [pause-ms]     (default 3213, 30000)
import { createServer } from "node:http";

const port = Number(process.argv[2] ?? 3213);
const pauseMs = Number(process.argv[3] ?? 30_000);

createServer((request, response) => {
  if (request.method === "GET" && request.url === "/") {
    response.writeHead(200).end("slow model");
    return;
  }
  if (request.method !== "POST" || !request.url?.endsWith("/chat/completions")) {
    response.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "not found" } }));
    return;
  }
  request.resume();
  const answer = setTimeout(() => {
    response.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        id: "chatcmpl-slow",
        object: "chat.completion",
        model: "slow-scripted",
        choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "Thank you for waiting." } }],
      }),
    );
  }, pauseMs);
  // Stop on Countersign's side drops the request: forget the answer.
  response.on("close", () => clearTimeout(answer));
}).listen(port, "127.0.0.1", () => console.log(`slow model on http://127.0.0.1:${port}/`));
