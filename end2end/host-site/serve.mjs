// Serves the static host page (a stand-in for a customer's web shop) on its
// own origin, so the widget runs cross-origin as it would in production.
//   node host-site/serve.mjs [port]     (default 3211)
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL(".", import.meta.url));
const port = Number(process.argv[2] ?? process.env.HOST_SITE_PORT ?? 3211);
const types = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8" };

createServer(async (request, response) => {
  const path = new URL(request.url ?? "/", "http://host").pathname;
  const file = normalize(join(root, path === "/" ? "index.html" : path));
  if (!file.startsWith(root) || !(extname(file) in types)) {
    response.writeHead(404).end("not found");
    return;
  }
  try {
    const body = await readFile(file);
    response.writeHead(200, { "content-type": types[extname(file)], "cache-control": "no-store" }).end(body);
  } catch {
    response.writeHead(404).end("not found");
  }
}).listen(port, "127.0.0.1", () => console.log(`host site on http://127.0.0.1:${port}/`));
