// List every mock route of the Spector ARM scenarios (@azure-tools/azure-http-specs,
// specs/azure/resource-manager/*) as JSON: scenario, method, uri, the request Spector checks
// (path params, query, headers, exact body) and the response it sends (status, headers, body).
//
// Usage: node spector_routes.mjs NODE_MODULES_DIR [BASE_URL] > spector-arm-routes.json
//   NODE_MODULES_DIR: where start_spector.sh installed the packages (…/node_modules)
//   BASE_URL: what `dyn` templates (Location / Azure-AsyncOperation URLs) expand to;
//             default http://localhost:3000 (Spector itself uses http://localhost:PORT).
// Routes with a custom handler (stateful LRO polling) are listed with `handler: "custom"`; their
// sequence of answers is described in FINDINGS.md, read from the mockapi sources.
// Runs of 64 or more copies of one character (large-header's 6 KB userContext) are written as
// <6144 x a> to keep the file small.
import { readdirSync, existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [nodeModules, baseUrl = "http://localhost:3000"] = process.argv.slice(2);
if (!nodeModules) {
  console.error("usage: node spector_routes.mjs NODE_MODULES_DIR [BASE_URL]");
  process.exit(2);
}
const specsDist = join(nodeModules, "@azure-tools/azure-http-specs/dist/specs/azure/resource-manager");
if (!existsSync(specsDist)) {
  console.error(`not found: ${specsDist} (install @azure-tools/azure-http-specs there first)`);
  process.exit(2);
}
const specApi = await import(pathToFileURL(join(nodeModules, "@typespec/spec-api/dist/index.js")).href);
const config = { baseUrl };

function render(body) {
  if (body === undefined || body === null) return undefined;
  const out = { contentType: body.contentType };
  const raw = body.rawContent;
  if (raw === undefined) return out;
  if (typeof raw === "string") out.raw = raw;
  else if (raw && typeof raw.serialize === "function") out.raw = raw.serialize(config);
  else out.raw = String(raw);
  if (out.contentType && out.contentType.includes("json") && typeof out.raw === "string") {
    try {
      out.json = JSON.parse(out.raw);
      delete out.raw;
    } catch {
      /* keep raw */
    }
  }
  return out;
}

const routes = [];
for (const dir of readdirSync(specsDist).sort()) {
  const file = join(specsDist, dir, "mockapi.js");
  if (!existsSync(file)) continue;
  const mod = await import(pathToFileURL(file).href);
  for (const [scenario, def] of Object.entries(mod.Scenarios ?? {})) {
    for (const api of def.apis ?? []) {
      const req = api.request ?? {};
      const res = api.response ?? {};
      routes.push({
        spec: dir,
        scenario,
        method: api.method.toUpperCase(),
        uri: api.uri,
        handler: api.handler ? "custom" : undefined,
        request: {
          pathParams: req.pathParams,
          query: req.query,
          headers: req.headers,
          body: render(req.body),
        },
        response: {
          status: res.status,
          headers: res.headers ? specApi.expandDyns(res.headers, config) : undefined,
          body: render(res.body),
        },
      });
    }
  }
}
const text = JSON.stringify(routes, null, 1).replace(/(.)\1{63,}/g, (run, ch) => `<${run.length} x ${ch}>`);
process.stdout.write(text + "\n");
