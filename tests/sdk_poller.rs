//! A real SDK client against the reference RP: the Azure Python SDK's `ARMPolling` drives PUT,
//! POST and DELETE to completion, honouring what the RP advertises. Runs when python3 with
//! azure-mgmt-core is available (`.ci/run` installs it); otherwise says so and passes.

use std::process::Command;
use std::time::Duration;

#[test]
fn azure_sdk_arm_polling_completes_every_operation() {
    let has_sdk = Command::new("python3")
        .args(["-c", "import azure.mgmt.core"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !has_sdk {
        eprintln!(
            "skipped: python3 with azure-mgmt-core is not installed (pip install azure-mgmt-core)"
        );
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let settings = rpconform_refrp::Settings {
        op_duration: Duration::from_millis(800),
        ..Default::default()
    };
    let server = rt.block_on(rpconform_refrp::start(settings, 0)).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/sdk/arm_polling.py");
    let out = Command::new("timeout")
        .args(["120", "python3", script, &server.base_url()])
        .output()
        .unwrap();
    rt.block_on(server.shutdown());
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "ARMPolling did not complete:\n{text}");
    assert!(
        text.contains("ARMPolling drove PUT, POST and DELETE to completion"),
        "{text}"
    );
}
