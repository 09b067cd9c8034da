"""Drive the reference RP's PUT, DELETE and POST operations to completion with the Azure SDK's
own long-running-operation poller (azure-mgmt-core ARMPolling), as an SDK user would.

Usage: python3 tests/sdk/arm_polling.py BASE_URL   (start one with `rpconform serve`)
Exit 0 when every operation completed as the SDK understands it.
"""
import json
import sys
import time
import uuid

from azure.core import PipelineClient
from azure.core.pipeline.policies import RequestIdPolicy, RetryPolicy
from azure.core.polling import LROPoller
from azure.core.rest import HttpRequest
from azure.mgmt.core.polling.arm_polling import ARMPolling

API = "2024-05-01"


def main(base):
    client = PipelineClient(base_url=base, policies=[RequestIdPolicy(), RetryPolicy(retry_total=0)])
    sub, rg = "00000000-0000-0000-0000-0000000050d4", f"sdk-{uuid.uuid4().hex[:8]}"
    rg_url = f"{base}/subscriptions/{sub}/resourceGroups/{rg}"
    r = client.send_request(HttpRequest("PUT", f"{rg_url}?api-version=2021-04-01", json={"location": "eastus"}))
    assert r.status_code in (200, 201), r.text()
    widget = f"{rg_url}/providers/Microsoft.Contoso/widgets/w{uuid.uuid4().hex[:8]}"

    def lro(method, url, body=None, **poll_kwargs):
        request = HttpRequest(method, f"{url}?api-version={API}", json=body)
        pipeline_response = client._pipeline.run(request)
        if pipeline_response.http_response.status_code >= 400:
            raise SystemExit(f"{method} {url}: {pipeline_response.http_response.status_code} {pipeline_response.http_response.text()}")

        def deserialize(resp):
            text = resp.http_response.text()
            return json.loads(text) if text else None

        polling = ARMPolling(timeout=0.2, **poll_kwargs)  # the RP advertises Retry-After; tests shorten it
        start = time.time()
        poller = LROPoller(client, pipeline_response, deserialize, polling)
        result = poller.result(timeout=60)
        print(f"{method:6} {url.rsplit('/', 2)[-2:]} -> status {poller.status()} in {time.time() - start:.1f}s, result: {json.dumps(result)[:120]}")
        return poller.status(), result

    status, result = lro("PUT", widget, {"location": "eastus", "properties": {"size": 3}})
    assert status.lower() == "succeeded" and result["properties"]["provisioningState"] == "Succeeded", result
    status, result = lro("POST", f"{widget}/restart", {}, lro_options={"final-state-via": "location"})
    assert status.lower() == "succeeded" and result.get("status") == "Restarted", result
    status, _ = lro("DELETE", widget)
    assert status.lower() == "succeeded", status
    gone = client.send_request(HttpRequest("GET", f"{widget}?api-version={API}"))
    assert gone.status_code == 404, gone.status_code
    print("ARMPolling drove PUT, POST and DELETE to completion")


if __name__ == "__main__":
    main(sys.argv[1].rstrip("/"))
