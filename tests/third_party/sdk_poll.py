#!/usr/bin/env python3
"""Drive one long-running operation with the Azure Python SDK's own poller and report the outcome.

Usage:
    sdk_poll.py URL METHOD [--final-state-via X] [--body JSON] [--header NAME:VALUE]...
                [--client-request-id ID] [--polling-interval S] [--max-sleep S]
                [--max-requests N] [--timeout S] [--retry-total N] [--no-cookies]
                [--format-relative]

What it does, as a generated management SDK would (azure-core + azure-mgmt-core):
  1. sends METHOD URL through an azure-core PipelineClient whose policy list mirrors the one a
     generated ARM client builds (RequestIdPolicy, HeadersPolicy, UserAgentPolicy,
     ContentDecodePolicy, ARMAutoResourceProviderRegistrationPolicy, RedirectPolicy,
     RetryPolicy), over the default RequestsTransport (one requests.Session, so cookies are kept
     unless --no-cookies);
  2. if the initial answer is >= 400, stops there as a generated client does (it raises
     HttpResponseError before creating a poller; terminal_state is then null);
  3. otherwise hands the initial response to azure-mgmt-core's ARMPolling inside an LROPoller
     and waits for it.

Prints one JSON object on stdout:
  {terminal_state, final_status_code, final_body, polled_urls: [...], error,
   strategy, initial_status_code, requests: [{method, url, status, headers, body}], sleeps: [...]}
  - terminal_state: poller.status() once the poller is done (the SDK's own string, e.g.
    "Succeeded", "succeeded", "Failed"), or null when no poller was created / it did not finish.
  - final_status_code / final_body: the response the SDK deserializes as the result (the last
    poll, or the final GET when the algorithm makes one). final_body is parsed JSON, else the
    raw text, else null when empty.
  - polled_urls: every GET URL sent after the initial request, in order (retries included).
  - requests: every request that went on the wire (after the retry policy), with its status,
    the LRO-relevant response headers (Azure-AsyncOperation, Location, Operation-Location,
    Retry-After and its -ms forms, Set-Cookie, x-ms-request-id) and the body (cut at 300 chars).
  - sleeps: every delay the SDK asked the transport for (poll intervals and retry back-offs),
    in seconds, as requested (before --max-sleep capping).
  - error: "ExceptionType: message" of what the SDK raised, or null.
Exit status: 0 when the script ran (whatever the SDK decided), 2 on bad arguments.

Time controls (they change only the wall clock, never the algorithm):
  --polling-interval S  ARMPolling(timeout=S): the SDK's delay when no Retry-After is given or
                        Retry-After is 0. Default 30 (the SDK default).
  --max-sleep S         cap each actual sleep at S seconds (the requested value is still recorded).
  --max-requests N      give up after N requests on the wire (default 60); the SDK has no such
                        bound, so this is reported as error "rpconform: ...".
  --timeout S           wall-clock bound for the whole poll (default 120).
"""
import argparse
import json
import sys
import threading
import time
from urllib.parse import urlsplit

from azure.core import PipelineClient
from azure.core.pipeline.policies import (
    ContentDecodePolicy,
    HeadersPolicy,
    RedirectPolicy,
    RequestIdPolicy,
    RetryPolicy,
    SansIOHTTPPolicy,
    UserAgentPolicy,
)
from azure.core.pipeline.transport import RequestsTransport
from azure.core.polling import LROPoller
from azure.core.rest import HttpRequest
from azure.mgmt.core.policies import ARMAutoResourceProviderRegistrationPolicy
from azure.mgmt.core.polling.arm_polling import ARMPolling


SHOWN_HEADERS = (
    "azure-asyncoperation",
    "location",
    "operation-location",
    "retry-after",
    "retry-after-ms",
    "x-ms-retry-after-ms",
    "set-cookie",
    "x-ms-request-id",
)


class TooManyRequests(Exception):
    """Raised by the recorder when --max-requests is exceeded."""


class Recorder(SansIOHTTPPolicy):
    """Per-retry policy: records every request that reaches the transport and its answer."""

    def __init__(self, limit):
        self.limit = limit
        self.log = []
        self.lock = threading.Lock()

    def on_request(self, request):
        with self.lock:
            if len(self.log) >= self.limit:
                raise TooManyRequests(f"rpconform: more than {self.limit} requests; the SDK would go on")
            self.log.append({"method": request.http_request.method, "url": request.http_request.url})

    def on_response(self, request, response):
        resp = response.http_response
        with self.lock:
            for entry in reversed(self.log):
                if entry["url"] == request.http_request.url and "status" not in entry:
                    entry["status"] = resp.status_code
                    seen = {h: resp.headers[h] for h in SHOWN_HEADERS if h in resp.headers}
                    if seen:
                        entry["headers"] = seen
                    try:
                        text = resp.text()
                    except Exception:  # noqa: BLE001 - a body we cannot decode is shown as such
                        text = "<undecodable>"
                    if text:
                        entry["body"] = text if len(text) <= 300 else text[:300] + "..."
                    break


class RecordingTransport(RequestsTransport):
    """The SDK's default transport; records (and optionally caps) the sleeps it is asked for."""

    def __init__(self, max_sleep=None, no_cookies=False, **kwargs):
        super().__init__(**kwargs)
        self.max_sleep = max_sleep
        self.no_cookies = no_cookies
        self.sleeps = []

    def open(self):
        super().open()
        if self.no_cookies and self.session is not None:
            from http.cookiejar import DefaultCookiePolicy

            self.session.cookies.set_policy(DefaultCookiePolicy(allowed_domains=[]))

    def sleep(self, duration):
        self.sleeps.append(duration)
        if self.max_sleep is not None:
            duration = min(duration, self.max_sleep)
        time.sleep(duration)


def body_of(http_response):
    try:
        text = http_response.text()
    except Exception as err:  # noqa: BLE001 - report, do not crash
        return f"<undecodable body: {err}>"
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def describe(err):
    return f"{type(err).__name__}: {err}".strip()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("url")
    p.add_argument("method", type=str.upper, choices=["PUT", "PATCH", "POST", "DELETE"])
    p.add_argument("--final-state-via", dest="fsv")
    p.add_argument("--body", help="JSON request body (default: {} for PUT/PATCH/POST, none for DELETE)")
    p.add_argument("--header", action="append", default=[], help="extra request header NAME:VALUE")
    p.add_argument("--client-request-id", help="x-ms-client-request-id to send (else a fresh GUID)")
    p.add_argument("--polling-interval", type=float, default=30.0)
    p.add_argument("--max-sleep", type=float)
    p.add_argument("--max-requests", type=int, default=60)
    p.add_argument("--timeout", type=float, default=120.0)
    p.add_argument("--retry-total", type=int, default=10)
    p.add_argument("--no-cookies", action="store_true", help="refuse every cookie the server sets")
    p.add_argument(
        "--format-relative",
        action="store_true",
        help="pass path_format_arguments to ARMPolling so relative poll URLs are joined to the "
        "client's base URL (data-plane generated code does this; ARM generated code does not)",
    )
    a = p.parse_args(argv)

    parts = urlsplit(a.url)
    if not parts.scheme or not parts.netloc:
        p.error(f"URL must be absolute: {a.url!r}")
    base = f"{parts.scheme}://{parts.netloc}"
    headers = {}
    for h in a.header:
        name, sep, value = h.partition(":")
        if not sep or not name.strip():
            p.error(f"--header wants NAME:VALUE, got {h!r}")
        headers[name.strip()] = value.strip()
    if a.body is not None:
        try:
            body = json.loads(a.body)
        except ValueError as err:
            p.error(f"--body is not JSON: {err}")
    else:
        body = None if a.method == "DELETE" else {}

    recorder = Recorder(a.max_requests)
    transport = RecordingTransport(max_sleep=a.max_sleep, no_cookies=a.no_cookies)
    policies = [
        RequestIdPolicy(**({"request_id": a.client_request_id} if a.client_request_id else {})),
        HeadersPolicy(),
        UserAgentPolicy(sdk_moniker="rpconform-sdk-poll"),
        ContentDecodePolicy(),
        ARMAutoResourceProviderRegistrationPolicy(),
        RedirectPolicy(),
        RetryPolicy(retry_total=a.retry_total),
        recorder,
    ]
    client = PipelineClient(base_url=base, policies=policies, transport=transport)

    out = {
        "terminal_state": None,
        "final_status_code": None,
        "final_body": None,
        "polled_urls": [],
        "error": None,
        "strategy": None,
        "initial_status_code": None,
    }
    try:
        request = HttpRequest(a.method, a.url, headers=headers, json=body) if body is not None else HttpRequest(
            a.method, a.url, headers=headers
        )
        initial = client._pipeline.run(request)  # pylint: disable=protected-access
        init_resp = initial.http_response
        out["initial_status_code"] = init_resp.status_code
        if init_resp.status_code >= 400:
            # Generated code: `if response.status_code not in [...]: raise HttpResponseError(...)`
            out["final_status_code"] = init_resp.status_code
            out["final_body"] = body_of(init_resp)
            out["error"] = f"HttpResponseError: initial request answered {init_resp.status_code}"
        else:
            lro_options = {"final-state-via": a.fsv} if a.fsv else None
            kwargs = {"path_format_arguments": {"endpoint": base}} if a.format_relative else {}
            polling = ARMPolling(timeout=a.polling_interval, lro_options=lro_options, **kwargs)
            poller = None
            try:
                poller = LROPoller(client, initial, lambda r: body_of(r.http_response), polling)
                out["strategy"] = type(polling._operation).__name__  # pylint: disable=protected-access
                poller.wait(timeout=a.timeout)
                if not poller.done():
                    out["error"] = f"rpconform: poller still running after {a.timeout}s"
                else:
                    out["terminal_state"] = poller.status()
            except Exception as err:  # noqa: BLE001 - the SDK's verdict is what we report
                out["error"] = describe(err)
                if poller is not None and poller.done():
                    out["terminal_state"] = poller.status()
            if out["strategy"] is None and getattr(polling, "_operation", None) is not None:
                out["strategy"] = type(polling._operation).__name__  # pylint: disable=protected-access
            last = getattr(polling, "_pipeline_response", None)
            if last is not None:
                out["final_status_code"] = last.http_response.status_code
                out["final_body"] = body_of(last.http_response)
    except Exception as err:  # noqa: BLE001
        out["error"] = describe(err)

    with recorder.lock:
        log = [dict(e) for e in recorder.log]
    out["polled_urls"] = [e["url"] for e in log[1:] if e["method"] == "GET"]
    out["requests"] = log
    out["sleeps"] = list(transport.sleeps)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
