#!/usr/bin/env python3
"""Check, against the installed Azure SDK, every claim FINDINGS.md makes about the ARMPolling
algorithm (section "The Azure SDK poller, precisely").

A scripted stub server on 127.0.0.1 (an ephemeral port) answers each request from a per-path
script; sdk_poll.py drives the SDK against it; each case asserts what the SDK did: the strategy it
picked, the URLs it polled, the delays it asked for, the terminal state, the final response and the
error. Run it after upgrading azure-core / azure-mgmt-core to see which statements still hold.

Usage: sdk_algorithm_check.py [--python PYTHON] [-k SUBSTRING] [-v]
Prints one line per case and a closing "N passed, M failed"; exit 1 if any case failed.
"""
import argparse
import json
import os
import subprocess
import sys
import threading
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))


class Stub:
    """(method, path) -> list of (status, headers, body), answered in order per (method, path);
    the last entry repeats. "{base}" in header values and bodies becomes the stub's base URL."""

    def __init__(self):
        self.scripts = {}
        self.hits = {}
        self.log = []
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _serve(self):
                length = int(self.headers.get("content-length") or 0)
                if length:
                    self.rfile.read(length)
                path = self.path.split("?", 1)[0]
                with stub.lock:
                    stub.log.append((self.command, self.path, dict(self.headers.items())))
                    script = stub.scripts.get((self.command, path)) or stub.scripts.get(("*", path))
                    key = (self.command, path)
                    n = stub.hits.get(key, 0)
                    stub.hits[key] = n + 1
                if script is None:
                    status, headers, body = 404, {}, '{"error":{"code":"NotFound","message":"no script"}}'
                else:
                    status, headers, body = script[min(n, len(script) - 1)]
                data = (body or "").replace("{base}", stub.base).encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v.replace("{base}", stub.base))
                if data:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_PUT = do_PATCH = do_POST = do_DELETE = _serve

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def script(self, method, path, *responses):
        self.scripts[(method, path)] = list(responses)

    def requests_for(self, prefix):
        with self.lock:
            return [(m, p, h) for (m, p, h) in self.log if p.startswith(prefix)]


def R(status, headers=None, body=None):
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
    return (status, headers or {}, body)


CASES = []


def case(name):
    def deco(fn):
        CASES.append((name, fn))
        return fn

    return deco


# Each case: set up scripts under its own prefix, return (url, method, extra sdk_poll args, check).
# check(out, reqs) returns a list of failure strings.


def paths(out):
    return [u.split("://", 1)[1].split("/", 1)[1].split("?", 1)[0] for u in out["polled_urls"]]


def expect(cond, msg, errs):
    if not cond:
        errs.append(msg)


@case("strategy: Azure-AsyncOperation wins over Location; PUT final GET is the original URL")
def c1(s, p):
    s.script("PUT", f"{p}/r", R(201, {"Azure-AsyncOperation": "{base}%s/op" % p, "Location": "{base}%s/loc" % p}, {"properties": {"provisioningState": "Accepted"}}))
    s.script("GET", f"{p}/op", R(200, {}, {"status": "InProgress"}), R(200, {}, {"status": "Succeeded"}))
    s.script("GET", f"{p}/r", R(200, {}, {"id": "r", "properties": {"provisioningState": "Succeeded"}}))

    def check(o, reqs, e):
        expect(o["strategy"] == "AzureAsyncOperationPolling", f"strategy {o['strategy']}", e)
        expect(paths(o) == [f"{p[1:]}/op", f"{p[1:]}/op", f"{p[1:]}/r"], f"polled {paths(o)}", e)
        expect(o["terminal_state"] == "Succeeded" and o["final_status_code"] == 200, "outcome", e)

    return f"{p}/r", "PUT", [], check


@case("first poll is immediate; later delays come from the latest response's Retry-After")
def c2(s, p):
    s.script("PUT", f"{p}/r", R(201, {"Azure-AsyncOperation": "{base}%s/op" % p, "Retry-After": "5"}, {}))
    s.script("GET", f"{p}/op", R(200, {"Retry-After": "3"}, {"status": "InProgress"}), R(200, {"Retry-After": "4"}, {"status": "InProgress"}), R(200, {}, {"status": "Succeeded"}))
    s.script("GET", f"{p}/r", R(200, {}, {"id": "r"}))

    def check(o, reqs, e):
        expect(o["sleeps"] == [3.0, 4.0], f"sleeps {o['sleeps']} (initial Retry-After 5 must not be slept before poll 1)", e)

    return f"{p}/r", "PUT", [], check


@case("Retry-After: 0 falls back to the polling interval (ARMPolling timeout)")
def c3(s, p):
    s.script("DELETE", f"{p}/r", R(202, {"Location": "{base}%s/loc" % p, "Retry-After": "0"}))
    s.script("GET", f"{p}/loc", R(202, {"Location": "{base}%s/loc" % p, "Retry-After": "0"}), R(204))

    def check(o, reqs, e):
        expect(o["sleeps"] == [7.0], f"sleeps {o['sleeps']}", e)

    return f"{p}/r", "DELETE", ["--polling-interval", "7"], check


@case("no Retry-After at all: the polling interval (SDK default 30 s)")
def c3b(s, p):
    s.script("DELETE", f"{p}/r", R(202, {"Location": "{base}%s/loc" % p}))
    s.script("GET", f"{p}/loc", R(202, {"Location": "{base}%s/loc" % p}), R(204))

    def check(o, reqs, e):
        expect(o["sleeps"] == [30.0], f"sleeps {o['sleeps']}", e)

    return f"{p}/r", "DELETE", ["--polling-interval", "30"], check


@case("retry-after-ms and x-ms-retry-after-ms are milliseconds; Retry-After takes precedence")
def c4(s, p):
    s.script("DELETE", f"{p}/r", R(202, {"Location": "{base}%s/loc" % p}))
    s.script(
        "GET",
        f"{p}/loc",
        R(202, {"Location": "{base}%s/loc" % p, "retry-after-ms": "1500"}),
        R(202, {"Location": "{base}%s/loc" % p, "x-ms-retry-after-ms": "250"}),
        R(202, {"Location": "{base}%s/loc" % p, "Retry-After": "2", "retry-after-ms": "9000"}),
        R(204),
    )

    def check(o, reqs, e):
        expect(o["sleeps"] == [1.5, 0.25, 2.0], f"sleeps {o['sleeps']}", e)

    return f"{p}/r", "DELETE", [], check


@case("Retry-After as an HTTP-date is honoured (seconds until that date, floored at 0)")
def c5(s, p):
    s.script("DELETE", f"{p}/r", R(202, {"Location": "{base}%s/loc" % p}))
    s.script("GET", f"{p}/loc", R(202, {"Location": "{base}%s/loc" % p, "Retry-After": formatdate(0, usegmt=True)}), R(204))

    def check(o, reqs, e):
        # a date in the past parses to 0, and 0 falls back to the polling interval
        expect(o["sleeps"] == [7.0], f"sleeps {o['sleeps']}", e)

    return f"{p}/r", "DELETE", ["--polling-interval", "7"], check


@case("an unparsable Retry-After on a poll answer makes the poller raise (ValueError)")
def c6(s, p):
    s.script("DELETE", f"{p}/r", R(202, {"Location": "{base}%s/loc" % p}))
    s.script("GET", f"{p}/loc", R(202, {"Location": "{base}%s/loc" % p, "Retry-After": "/bar"}), R(204))

    def check(o, reqs, e):
        expect((o["error"] or "").startswith("ValueError"), f"error {o['error']}", e)
        expect(o["terminal_state"] == "InProgress", f"state {o['terminal_state']}", e)

    return f"{p}/r", "DELETE", [], check


@case("Location polling: every 202 re-reads Location; 200 means Succeeded whatever the body says")
def c7(s, p):
    s.script("POST", f"{p}/act", R(202, {"Location": "{base}%s/l1" % p}))
    s.script("GET", f"{p}/l1", R(202, {"Location": "{base}%s/l2" % p}))
    s.script("GET", f"{p}/l2", R(200, {}, {"status": "Failed"}))

    def check(o, reqs, e):
        expect(o["strategy"] == "LocationPolling", f"strategy {o['strategy']}", e)
        expect(paths(o) == [f"{p[1:]}/l1", f"{p[1:]}/l2"], f"polled {paths(o)}", e)
        expect(o["terminal_state"] == "Succeeded" and o["final_body"] == {"status": "Failed"}, f"{o['terminal_state']} {o['final_body']}", e)

    return f"{p}/act", "POST", [], check


@case("Location polling: a 202 without Location keeps the previous URL")
def c7b(s, p):
    s.script("DELETE", f"{p}/r", R(202, {"Location": "{base}%s/l1" % p}))
    s.script("GET", f"{p}/l1", R(202), R(204))

    def check(o, reqs, e):
        expect(paths(o) == [f"{p[1:]}/l1", f"{p[1:]}/l1"], f"polled {paths(o)}", e)
        expect(o["terminal_state"] == "Succeeded" and o["final_status_code"] == 204, "outcome", e)

    return f"{p}/r", "DELETE", [], check


@case("Azure-AsyncOperation polling never re-reads Azure-AsyncOperation or Location from polls")
def c8(s, p):
    s.script("POST", f"{p}/act", R(202, {"Azure-AsyncOperation": "{base}%s/op1" % p, "Location": "{base}%s/loc1" % p}))
    s.script("GET", f"{p}/op1", R(200, {"Azure-AsyncOperation": "{base}%s/op2" % p, "Location": "{base}%s/loc2" % p}, {"status": "InProgress"}), R(200, {}, {"status": "Succeeded"}))
    s.script("GET", f"{p}/loc1", R(200, {}, {"result": 1}))

    def check(o, reqs, e):
        expect(paths(o) == [f"{p[1:]}/op1", f"{p[1:]}/op1", f"{p[1:]}/loc1"], f"polled {paths(o)}", e)
        expect(o["final_body"] == {"result": 1}, f"final {o['final_body']}", e)

    return f"{p}/act", "POST", [], check


@case("an Azure-AsyncOperation poll may answer 202 (status comes from the body)")
def c9(s, p):
    s.script("DELETE", f"{p}/r", R(202, {"Azure-AsyncOperation": "{base}%s/op" % p}))
    s.script("GET", f"{p}/op", R(202, {}, {"status": "InProgress"}), R(202, {}, {"status": "Succeeded"}))

    def check(o, reqs, e):
        expect(o["terminal_state"] == "Succeeded" and o["final_status_code"] == 202, f"{o['terminal_state']} {o['final_status_code']}", e)

    return f"{p}/r", "DELETE", [], check


@case("status names are compared case-insensitively; the raw string is kept")
def c10(s, p):
    s.script("DELETE", f"{p}/r", R(202, {"Azure-AsyncOperation": "{base}%s/op" % p}))
    s.script("GET", f"{p}/op", R(200, {}, {"status": "SUCCEEDED"}))

    def check(o, reqs, e):
        expect(o["terminal_state"] == "SUCCEEDED" and o["error"] is None, f"{o['terminal_state']} {o['error']}", e)

    return f"{p}/r", "DELETE", [], check


@case("only succeeded/failed/canceled end polling: 'Completed' and 'Cancelled' keep polling")
def c11(s, p):
    s.script("DELETE", f"{p}/r", R(202, {"Azure-AsyncOperation": "{base}%s/op" % p}))
    s.script("GET", f"{p}/op", R(200, {}, {"status": "Completed"}), R(200, {}, {"status": "Cancelled"}))

    def check(o, reqs, e):
        # the poller was still polling when sdk_poll.py's request bound stopped it
        expect((o["error"] or "").startswith("TooManyRequests"), f"error {o['error']}", e)
        expect(len(o["polled_urls"]) >= 3, f"polled {len(o['polled_urls'])} times", e)

    return f"{p}/r", "DELETE", ["--max-requests", "6"], check


@case("Failed/Canceled operation status: HttpResponseError, no final GET, state kept")
def c12(s, p):
    s.script("PUT", f"{p}/r", R(201, {"Azure-AsyncOperation": "{base}%s/op" % p}, {"properties": {"provisioningState": "Accepted"}}))
    s.script("GET", f"{p}/op", R(200, {}, {"status": "Canceled", "error": {"code": "X", "message": "y"}}))

    def check(o, reqs, e):
        expect(o["terminal_state"] == "Canceled", f"state {o['terminal_state']}", e)
        expect((o["error"] or "").startswith("HttpResponseError"), f"error {o['error']}", e)
        expect(paths(o) == [f"{p[1:]}/op"], f"polled {paths(o)}", e)

    return f"{p}/r", "PUT", [], check


@case("4xx on a poll: BadStatus -> HttpResponseError, state Failed, no retry")
def c13(s, p):
    s.script("DELETE", f"{p}/r", R(202, {"Location": "{base}%s/loc" % p}))
    s.script("GET", f"{p}/loc", R(404, {}, {"error": {"code": "NotFound", "message": "gone"}}))

    def check(o, reqs, e):
        expect(o["terminal_state"] == "Failed" and o["final_status_code"] == 404, f"{o['terminal_state']} {o['final_status_code']}", e)
        expect(len(paths(o)) == 1, f"polled {paths(o)}", e)

    return f"{p}/r", "DELETE", [], check


@case("5xx on a poll is retried by RetryPolicy (3 status retries), then BadStatus")
def c14(s, p):
    s.script("DELETE", f"{p}/r", R(202, {"Location": "{base}%s/loc" % p}))
    s.script("GET", f"{p}/loc", R(503, {}, {"error": {"code": "Busy", "message": "later"}}))

    def check(o, reqs, e):
        expect(len(paths(o)) == 4, f"polled {len(paths(o))} times", e)
        expect(o["sleeps"] == [1.6, 3.2], f"back-off sleeps {o['sleeps']} (first retry immediate)", e)
        expect(o["terminal_state"] == "Failed" and o["final_status_code"] == 503, f"{o['terminal_state']} {o['final_status_code']}", e)

    return f"{p}/r", "DELETE", [], check


@case("a 4xx poll answer carrying Retry-After is retried like a 5xx (up to 3 status retries)")
def c14b(s, p):
    s.script("DELETE", f"{p}/r", R(202, {"Location": "{base}%s/loc" % p}))
    s.script("GET", f"{p}/loc", R(400, {"Retry-After": "1"}, {"error": {"code": "Bad", "message": "x"}}))

    def check(o, reqs, e):
        expect(len(paths(o)) == 4, f"polled {len(paths(o))} times", e)
        expect(o["sleeps"] == [1.0, 1.0, 1.0], f"sleeps {o['sleeps']}", e)

    return f"{p}/r", "DELETE", [], check


@case("PUT/PATCH without AAO/Location: BodyContentPolling GETs the original URL")
def c15(s, p):
    s.script("PATCH", f"{p}/r", R(202))
    s.script("GET", f"{p}/r", R(200, {}, {"properties": {"provisioningState": "Updating"}}), R(200, {}, {"properties": {"provisioningState": "Succeeded"}}))

    def check(o, reqs, e):
        expect(o["strategy"] == "BodyContentPolling", f"strategy {o['strategy']}", e)
        expect(paths(o) == [f"{p[1:]}/r", f"{p[1:]}/r"], f"polled {paths(o)}", e)
        expect(o["terminal_state"] == "Succeeded", f"state {o['terminal_state']}", e)

    return f"{p}/r", "PATCH", [], check


@case("BodyContentPolling: a 200 without provisioningState is Succeeded at once (no GET)")
def c16(s, p):
    s.script("PUT", f"{p}/r", R(200, {}, {"id": "r"}))

    def check(o, reqs, e):
        expect(o["polled_urls"] == [] and o["terminal_state"] == "Succeeded", f"{o['polled_urls']} {o['terminal_state']}", e)

    return f"{p}/r", "PUT", [], check


@case("BodyContentPolling: 201 without provisioningState is InProgress; an empty 200 poll body fails")
def c17(s, p):
    s.script("PUT", f"{p}/r", R(201))
    s.script("GET", f"{p}/r", R(200))

    def check(o, reqs, e):
        expect(o["terminal_state"] == "Failed" and "does not contain a body" in (o["error"] or ""), f"{o['terminal_state']} {o['error']}", e)

    return f"{p}/r", "PUT", [], check


@case("DELETE/POST 202 without AAO/Location: StatusCheckPolling, Succeeded at once, no GET")
def c18(s, p):
    s.script("POST", f"{p}/act", R(202))

    def check(o, reqs, e):
        expect(o["strategy"] == "StatusCheckPolling" and o["polled_urls"] == [], f"{o['strategy']} {o['polled_urls']}", e)
        expect(o["terminal_state"] == "Succeeded" and o["final_status_code"] == 202, "outcome", e)

    return f"{p}/act", "POST", [], check


@case("initial AAO body already terminal: no poll and no final GET at all")
def c19(s, p):
    s.script("PUT", f"{p}/r", R(201, {"Azure-AsyncOperation": "{base}%s/op" % p}, {"status": "Succeeded", "id": "r"}))

    def check(o, reqs, e):
        expect(o["polled_urls"] == [] and o["terminal_state"] == "Succeeded", f"{o['polled_urls']} {o['terminal_state']}", e)

    return f"{p}/r", "PUT", [], check


@case("final-state-via location on PUT: final GET on the initial Location")
def c20(s, p):
    s.script("PUT", f"{p}/r", R(201, {"Azure-AsyncOperation": "{base}%s/op" % p, "Location": "{base}%s/loc" % p}, {}))
    s.script("GET", f"{p}/op", R(200, {}, {"status": "Succeeded"}))
    s.script("GET", f"{p}/loc", R(200, {}, {"from": "location"}))

    def check(o, reqs, e):
        expect(paths(o) == [f"{p[1:]}/op", f"{p[1:]}/loc"], f"polled {paths(o)}", e)

    return f"{p}/r", "PUT", ["--final-state-via", "location"], check


@case("resourceLocation in the terminal status body is the final GET (no final-state-via)")
def c21(s, p):
    s.script("PUT", f"{p}/r", R(201, {"Azure-AsyncOperation": "{base}%s/op" % p}, {}))
    s.script("GET", f"{p}/op", R(200, {}, {"status": "Succeeded", "resourceLocation": "{base}%s/elsewhere" % p}))
    s.script("GET", f"{p}/elsewhere", R(200, {}, {"where": "resourceLocation"}))

    def check(o, reqs, e):
        expect(paths(o) == [f"{p[1:]}/op", f"{p[1:]}/elsewhere"], f"polled {paths(o)}", e)
        expect(o["final_body"] == {"where": "resourceLocation"}, f"final {o['final_body']}", e)

    return f"{p}/r", "PUT", [], check


@case("POST with AAO and no Location: no final GET; the result is the status body")
def c22(s, p):
    s.script("POST", f"{p}/act", R(202, {"Azure-AsyncOperation": "{base}%s/op" % p}))
    s.script("GET", f"{p}/op", R(200, {}, {"status": "Succeeded", "properties": {"x": 1}}))

    def check(o, reqs, e):
        expect(paths(o) == [f"{p[1:]}/op"], f"polled {paths(o)}", e)
        expect(o["final_body"] == {"status": "Succeeded", "properties": {"x": 1}}, f"final {o['final_body']}", e)

    return f"{p}/act", "POST", [], check


@case("POST final-state-via azure-async-operation: no final GET even with Location")
def c23(s, p):
    s.script("POST", f"{p}/act", R(202, {"Azure-AsyncOperation": "{base}%s/op" % p, "Location": "{base}%s/loc" % p}))
    s.script("GET", f"{p}/op", R(200, {}, {"status": "Succeeded"}))
    s.script("GET", f"{p}/loc", R(400, {}, {"error": {"code": "NoFinalGet", "message": "must not be called"}}))

    def check(o, reqs, e):
        expect(paths(o) == [f"{p[1:]}/op"], f"polled {paths(o)}", e)

    return f"{p}/act", "POST", ["--final-state-via", "azure-async-operation"], check


@case("POST final-state-via original-uri is not a known option: behaves as the default (GET Location)")
def c24(s, p):
    s.script("POST", f"{p}/act", R(202, {"Azure-AsyncOperation": "{base}%s/op" % p, "Location": "{base}%s/loc" % p}))
    s.script("GET", f"{p}/op", R(200, {}, {"status": "Succeeded"}))
    s.script("GET", f"{p}/loc", R(200, {}, {"from": "location"}))

    def check(o, reqs, e):
        expect(paths(o) == [f"{p[1:]}/op", f"{p[1:]}/loc"], f"polled {paths(o)}", e)

    return f"{p}/act", "POST", ["--final-state-via", "original-uri"], check


@case("DELETE with AAO and Location: no final GET by default; with final-state-via location, GET Location")
def c25(s, p):
    s.script("DELETE", f"{p}/a", R(202, {"Azure-AsyncOperation": "{base}%s/op" % p, "Location": "{base}%s/loc" % p}))
    s.script("GET", f"{p}/op", R(200, {}, {"status": "Succeeded"}))
    s.script("GET", f"{p}/loc", R(204))

    def check(o, reqs, e):
        expect(paths(o) == [f"{p[1:]}/op", f"{p[1:]}/loc"], f"polled {paths(o)}", e)

    return f"{p}/a", "DELETE", ["--final-state-via", "location"], check


@case("DELETE with AAO and Location, default: no final GET")
def c25b(s, p):
    s.script("DELETE", f"{p}/a", R(202, {"Azure-AsyncOperation": "{base}%s/op" % p, "Location": "{base}%s/loc" % p}))
    s.script("GET", f"{p}/op", R(200, {}, {"status": "Succeeded"}))

    def check(o, reqs, e):
        expect(paths(o) == [f"{p[1:]}/op"], f"polled {paths(o)}", e)

    return f"{p}/a", "DELETE", [], check


@case("PUT answered with Location only: LocationPolling, and the last poll answer is the result (no GET of the PUT URL)")
def c26(s, p):
    s.script("PUT", f"{p}/r", R(201, {"Location": "{base}%s/loc" % p}, {"properties": {"provisioningState": "Creating"}}))
    s.script("GET", f"{p}/loc", R(202, {"Location": "{base}%s/loc" % p}), R(200, {}, {"id": "from-location"}))

    def check(o, reqs, e):
        expect(o["strategy"] == "LocationPolling", f"strategy {o['strategy']}", e)
        expect(paths(o) == [f"{p[1:]}/loc", f"{p[1:]}/loc"], f"polled {paths(o)}", e)
        expect(o["final_body"] == {"id": "from-location"}, f"final {o['final_body']}", e)

    return f"{p}/r", "PUT", [], check


@case("a relative poll URL is not joined to the base URL (ARM generated code): request error")
def c27(s, p):
    s.script("DELETE", f"{p}/r", R(202, {"Location": "%s/loc" % p}))

    def check(o, reqs, e):
        expect((o["error"] or "").startswith("ServiceResponseError") and o["terminal_state"] == "InProgress", f"{o['terminal_state']} {o['error']}", e)

    return f"{p}/r", "DELETE", [], check


@case("with path_format_arguments a relative poll URL is joined to the client's base URL")
def c28(s, p):
    s.script("DELETE", f"{p}/r", R(202, {"Location": "%s/loc" % p}))
    s.script("GET", f"{p}/loc", R(204))

    def check(o, reqs, e):
        expect(paths(o) == [f"{p[1:]}/loc"] and o["terminal_state"] == "Succeeded", f"{paths(o)} {o['terminal_state']}", e)

    return f"{p}/r", "DELETE", ["--format-relative"], check


@case("every poll carries the initial x-ms-client-request-id")
def c29(s, p):
    s.script("DELETE", f"{p}/r", R(202, {"Location": "{base}%s/loc" % p}))
    s.script("GET", f"{p}/loc", R(202, {"Location": "{base}%s/loc" % p}), R(204))

    def check(o, reqs, e):
        ids = {h.get("x-ms-client-request-id") for (_, _, h) in reqs}
        expect(ids == {"11111111-2222-3333-4444-555555555555"}, f"ids {ids}", e)

    return f"{p}/r", "DELETE", ["--client-request-id", "11111111-2222-3333-4444-555555555555"], check


@case("the final GET must answer 200/201/202/204, else HttpResponseError and state Failed")
def c30(s, p):
    s.script("PUT", f"{p}/r", R(201, {"Azure-AsyncOperation": "{base}%s/op" % p}, {}))
    s.script("GET", f"{p}/op", R(200, {}, {"status": "Succeeded"}))
    s.script("GET", f"{p}/r", R(404, {}, {"error": {"code": "NotFound", "message": "x"}}))

    def check(o, reqs, e):
        expect((o["error"] or "").startswith("HttpResponseError") and o["terminal_state"] == "Failed", f"{o['terminal_state']} {o['error']}", e)
        expect(o["final_status_code"] == 404, f"final {o['final_status_code']}", e)

    return f"{p}/r", "PUT", [], check


@case("an empty or status-less Azure-AsyncOperation body fails the poll (BadResponse)")
def c31(s, p):
    s.script("DELETE", f"{p}/r", R(202, {"Azure-AsyncOperation": "{base}%s/op" % p}))
    s.script("GET", f"{p}/op", R(200, {}, {"state": "Succeeded"}))

    def check(o, reqs, e):
        expect(o["terminal_state"] == "Failed" and "No status found" in (o["error"] or ""), f"{o['terminal_state']} {o['error']}", e)

    return f"{p}/r", "DELETE", [], check


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("-k", dest="filter")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    stub = Stub()
    passed = failed = 0
    for i, (name, fn) in enumerate(CASES):
        if a.filter and a.filter.lower() not in name.lower():
            continue
        prefix = f"/c{i}"
        url, method, extra, check = fn(stub, prefix)
        cmd = [a.python, os.path.join(HERE, "sdk_poll.py"), stub.base + url + "?api-version=2024-01-01", method,
               "--max-sleep", "0", "--polling-interval", "7", "--max-requests", "12", "--timeout", "30"]
        # later options win in argparse, so a case may override the defaults above
        cmd += extra
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=90, check=False)
        errs = []
        try:
            out = json.loads(proc.stdout)
        except ValueError:
            errs.append(f"sdk_poll.py printed no JSON (rc {proc.returncode}): {proc.stderr[-400:]}")
            out = None
        if out is not None:
            check(out, stub.requests_for(prefix + "/"), errs)
        if errs:
            failed += 1
            print(f"FAIL {name}")
            for err in errs:
                print(f"     {err}")
            if a.v and out is not None:
                print("     " + json.dumps(out)[:2000])
        else:
            passed += 1
            print(f"ok   {name}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
