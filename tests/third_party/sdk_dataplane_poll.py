#!/usr/bin/env python3
"""Drive one data-plane long-running operation with azure-core's own poller and report the outcome.

Usage:
    sdk_dataplane_poll.py URL METHOD [--body JSON] [--final-state-via X] [--polling-interval S]
                          [--max-sleep S] [--timeout S] [--add-api-version]

As a generated TypeSpec data-plane client does: METHOD URL goes through an azure-core
PipelineClient with its policies (RequestIdPolicy, HeadersPolicy, UserAgentPolicy,
ContentDecodePolicy, RedirectPolicy, RetryPolicy); an answer >= 400 stops there (the client
raises HttpResponseError before any poller); otherwise LROPoller + LROBasePolling (default
algorithms OperationResourcePolling, LocationPolling, StatusCheckPolling; path_format_arguments
{"endpoint": scheme://host}; lro_options {"final-state-via": X} when given) wait for the end.

Prints one JSON object: {terminal_state, final_status_code, final_body, polled_urls, error}
  terminal_state     poller.status() once done (the SDK's string), else null
  final_status_code  status of the response the SDK hands to deserialization_callback (the last
  final_body         monitor read, or the final GET), and that response's JSON (text if not
                     JSON; null when empty, where the SDK returns None without the callback)
  polled_urls        every GET sent after the initial request (retries included)
  error              "Type: message" of what the SDK raised, else null

api-version on monitor links (azure-core 1.41.0, base_polling.py): LROBasePolling.request_status
GETs the link exactly as handed out; its only rewrite is client.format_url(link,
**path_format_arguments), which fills a relative link's {endpoint} and leaves an absolute one
alone. Nothing in azure-core adds or replaces api-version (azure-sdk-for-python#33263; the PR
that would have, #33192, was closed unmerged), and generated clients pass only
path_format_arguments and lro_options. Spector's Operation-Location links carry no api-version and
its monitors refuse a GET without one (400), so the plain SDK fails there; typespec-python's own
Spector tests poll with an LROBasePolling subclass whose request_status adds the client's
api-version ("after azure-core fix, the following code can be removed"). --add-api-version does
the same with the URL's api-version (added, or replacing one the link carries).

Time controls change only the wall clock: --polling-interval S is LROBasePolling(timeout=S), the
delay when no Retry-After is given (default 30, the SDK's); --max-sleep S caps each real sleep;
--timeout S bounds the whole wait (default 120).
"""
import argparse
import json
import sys
import time
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

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
from azure.core.polling.base_polling import LROBasePolling
from azure.core.rest import HttpRequest


class Recorder(SansIOHTTPPolicy):
    """Per-retry policy: every request that reaches the transport, in order."""

    def __init__(self):
        self.sent = []

    def on_request(self, request):
        self.sent.append((request.http_request.method, request.http_request.url))


class CappedTransport(RequestsTransport):
    """The SDK's default transport, each sleep cut to max_sleep."""

    def __init__(self, max_sleep=None, **kwargs):
        super().__init__(**kwargs)
        self.max_sleep = max_sleep

    def sleep(self, duration):
        time.sleep(duration if self.max_sleep is None else min(duration, self.max_sleep))


class ApiVersionPolling(LROBasePolling):
    """LROBasePolling that sets api-version on every status link (typespec-python's Spector
    tests' workaround; azure-core does not do it)."""

    def __init__(self, api_version, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._api_version = api_version

    def request_status(self, status_link):
        parts = urlsplit(status_link)
        query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k.lower() != "api-version"]
        query.append(("api-version", self._api_version))
        return super().request_status(urlunsplit(parts._replace(query=urlencode(query))))


def body_of(http_response):
    text = http_response.text()
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("url")
    p.add_argument("method", type=str.upper, choices=["PUT", "PATCH", "POST", "DELETE"])
    p.add_argument("--body", help="JSON request body (default: none)")
    p.add_argument("--final-state-via", dest="fsv")
    p.add_argument("--polling-interval", type=float, default=30.0)
    p.add_argument("--max-sleep", type=float)
    p.add_argument("--timeout", type=float, default=120.0)
    p.add_argument("--add-api-version", action="store_true", help="set the URL's api-version on status links")
    a = p.parse_args(argv)

    parts = urlsplit(a.url)
    if not parts.scheme or not parts.netloc:
        p.error(f"URL must be absolute: {a.url!r}")
    endpoint = f"{parts.scheme}://{parts.netloc}"
    api_version = dict(parse_qsl(parts.query)).get("api-version")
    if a.add_api_version and not api_version:
        p.error("--add-api-version needs an api-version in URL")
    body = None
    if a.body is not None:
        try:
            body = json.loads(a.body)
        except ValueError as err:
            p.error(f"--body is not JSON: {err}")

    recorder = Recorder()
    transport = CappedTransport(max_sleep=a.max_sleep)
    policies = [
        RequestIdPolicy(),
        HeadersPolicy(),
        UserAgentPolicy(sdk_moniker="rpconform-sdk-dataplane-poll"),
        ContentDecodePolicy(),
        RedirectPolicy(),
        RetryPolicy(),
        recorder,
    ]
    client = PipelineClient(base_url="{endpoint}", policies=policies, transport=transport)
    out = {"terminal_state": None, "final_status_code": None, "final_body": None, "polled_urls": [], "error": None}
    final = {}

    def deserialize(pipeline_response):  # what the poller hands over as the result
        final["status"] = pipeline_response.http_response.status_code
        return body_of(pipeline_response.http_response)

    try:
        request = HttpRequest(a.method, a.url, json=body) if body is not None else HttpRequest(a.method, a.url)
        initial = client._pipeline.run(request)  # pylint: disable=protected-access
        if initial.http_response.status_code >= 400:
            out["final_status_code"] = initial.http_response.status_code
            out["final_body"] = body_of(initial.http_response)
            out["error"] = f"HttpResponseError: initial request answered {initial.http_response.status_code}"
        else:
            options = {
                "lro_options": {"final-state-via": a.fsv} if a.fsv else None,
                "path_format_arguments": {"endpoint": endpoint},
            }
            if a.add_api_version:
                polling = ApiVersionPolling(api_version, a.polling_interval, **options)
            else:
                polling = LROBasePolling(a.polling_interval, **options)
            poller = LROPoller(client, initial, deserialize, polling)
            try:
                out["final_body"] = poller.result(timeout=a.timeout)
                if not poller.done():
                    out["error"] = f"rpconform: poller still running after {a.timeout}s"
            except Exception as err:  # noqa: BLE001 - the SDK's verdict is what we report
                out["error"] = f"{type(err).__name__}: {err}".strip()
            if poller.done():
                out["terminal_state"] = poller.status()
            last = getattr(polling, "_pipeline_response", None)
            out["final_status_code"] = final.get("status") or (last.http_response.status_code if last else None)
    except Exception as err:  # noqa: BLE001
        out["error"] = f"{type(err).__name__}: {err}".strip()

    out["polled_urls"] = [url for method, url in recorder.sent[1:] if method == "GET"]
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
