// Preloaded with `node --require bind-loopback.cjs ...` by start_autorest.sh and start_spector.sh.
//
// Neither @microsoft.azure/autorest.testserver nor @typespec/spector lets the caller choose the
// listening address: both call `server.listen(port)`, which Node binds to every interface
// (`::`, dual stack). This preload changes no package file. It wraps net.Server#listen so that a
// listen call that names a port but no host gets the host from RPCONFORM_BIND_HOST
// (default 127.0.0.1). Calls that already name a host, or listen on a pipe/handle, are untouched.
"use strict";
const net = require("net");

const host = process.env.RPCONFORM_BIND_HOST || "127.0.0.1";
const original = net.Server.prototype.listen;

function isPort(v) {
  return typeof v === "number" || (typeof v === "string" && /^\d+$/.test(v));
}

net.Server.prototype.listen = function (...args) {
  if (args.length > 0 && isPort(args[0]) && (args.length === 1 || typeof args[1] === "function")) {
    // listen(port[, callback]) or listen(port, backlog?) without host: insert the host.
    args.splice(1, 0, host);
  } else if (args.length > 0 && args[0] !== null && typeof args[0] === "object" && !Array.isArray(args[0])) {
    const opts = args[0];
    if (opts.path === undefined && opts.handle === undefined && opts.fd === undefined && opts.host === undefined) {
      args[0] = { ...opts, host };
    }
  } else if (args.length === 0 || args[0] === undefined || typeof args[0] === "function") {
    // listen() / listen(undefined, cb): an ephemeral port on the loopback host.
    args = [0, host, ...args.filter((a) => typeof a === "function")];
  }
  return original.apply(this, args);
};
