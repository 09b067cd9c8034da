//! A large generated HAR (200 MB: portal scripts, ARM lists over the body cap, ARM operations)
//! is read and judged in bounded memory: the read, the target inference and the judging
//! happen in a child process (this test binary again, filtered to `large_har_child`) whose peak
//! RSS (`VmHWM` in /proc/self/status) is checked.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use rpconform::replay::{BodyState, ReadOptions, infer, judge_recording, read_recording};
use serde_json::{Value, json};

const CHILD_ENV: &str = "RPCONFORM_TEST_LARGE_HAR";

/// Write a HAR of about `target` bytes: portal-like script bodies (non-ARM, base64), ARM list
/// answers over the body cap, and ARM operations with their polls. Large entries are
/// serialised once and written with a new number each time.
fn generate_har(path: &Path, target: u64) -> u64 {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let sub = "https://management.azure.com/subscriptions/00000000-0000-0000-0000-000000000000";
    let mk = |method: &str, url: &str, status: u16, headers: Value, text: &str, b64: bool| {
        let mut content = json!({"size": text.len(), "mimeType": "application/json", "text": text});
        if b64 {
            content["encoding"] = json!("base64");
        }
        json!({"startedDateTime": "2024-05-01T10:00:00.000Z", "time": 5,
               "request": {"method": method, "url": url, "httpVersion": "HTTP/2",
                           "headers": [{"name": ":authority", "value": "management.azure.com"},
                                       {"name": "Authorization", "value": "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.c2ln"}],
                           "queryString": []},
               "response": {"status": status, "statusText": "", "headers": headers, "content": content}})
        .to_string()
    };
    // (text before the number, text after it)
    let split = |s: String| -> (String, String) {
        let (a, b) = s.split_once("@N@").unwrap();
        (a.to_string(), b.to_string())
    };
    let script = {
        let line = "function f(a){return a*31;}\n".repeat(28_000);
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, line.as_bytes())
    };
    let script = split(mk(
        "GET",
        "https://portal.azure.com/Content/Dynamic/@N@.js",
        200,
        json!([]),
        &script,
        true,
    ));
    let item =
        r#"{"id": "/subscriptions/s/resourceGroups/rg", "name": "rg", "location": "eastus"}"#;
    let list = format!(r#"{{"value": [{}]}}"#, vec![item; 230_000].join(","));
    let list = split(mk(
        "GET",
        &format!("{sub}/resourcegroups?api-version=2021-04-01&n=@N@"),
        200,
        json!([]),
        &list,
        false,
    ));
    f.write_all(
        br#"{"log": {"version": "1.2", "creator": {"name": "gen", "version": "1"}, "entries": ["#,
    )
    .unwrap();
    let mut written: u64 = 0;
    let mut n: u64 = 0;
    while written < target {
        n += 1;
        let parts: Vec<String> = if n.is_multiple_of(40) {
            vec![format!("{}{n}{}", list.0, list.1)]
        } else if n.is_multiple_of(2) {
            vec![format!("{}{n}{}", script.0, script.1)]
        } else {
            let vnet = format!(
                "{sub}/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v{n}?api-version=2023-01-01"
            );
            let op = format!(
                "{sub}/providers/Microsoft.Network/locations/eastus/operations/{n}?api-version=2023-01-01"
            );
            vec![
                mk(
                    "PUT",
                    &vnet,
                    201,
                    json!([{"name": "Azure-AsyncOperation", "value": op}]),
                    r#"{"properties": {"provisioningState": "Updating"}}"#,
                    false,
                ),
                mk(
                    "GET",
                    &op,
                    200,
                    json!([]),
                    r#"{"status": "Succeeded"}"#,
                    false,
                ),
                mk(
                    "GET",
                    &vnet,
                    200,
                    json!([]),
                    r#"{"properties": {"provisioningState": "Succeeded"}}"#,
                    false,
                ),
            ]
        };
        for p in parts {
            if written > 0 {
                f.write_all(b",\n").unwrap();
            }
            f.write_all(p.as_bytes()).unwrap();
            written += p.len() as u64 + 2;
        }
    }
    f.write_all(b"]}}\n").unwrap();
    f.flush().unwrap();
    written
}

/// Runs only in the child process that `a_large_har_is_read_in_bounded_memory` starts.
#[test]
fn large_har_child() {
    let Ok(path) = std::env::var(CHILD_ENV) else {
        return;
    };
    let start = Instant::now();
    let r = read_recording(Path::new(&path), &ReadOptions::default()).unwrap();
    let mut inf = infer::Inference::new();
    inf.add(&r);
    let target = inf.target();
    let judged = judge_recording(&r, &target, &Default::default(), false);
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let hwm = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let over = r
        .meta
        .iter()
        .filter(|m| matches!(m.response_body, BodyState::OverCap { .. }))
        .count();
    println!(
        "CHILD entries={} flows={} over_cap={} verdicts={} secs={:.1} {hwm}",
        r.entries.len(),
        r.flows.len(),
        over,
        judged.verdicts.len(),
        start.elapsed().as_secs_f64()
    );
}

#[test]
fn a_large_har_is_read_in_bounded_memory() {
    let dir = std::env::temp_dir().join(format!("rpconform-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("large.har");
    let size = generate_har(&path, 200 * 1024 * 1024);
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "replay_large_har::large_har_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, &path)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.split_once("CHILD").map(|(_, r)| r))
        .unwrap_or_else(|| panic!("no report from the child: {stdout}"));
    eprintln!("{} MB HAR: {line}", size >> 20);
    let kb: u64 = line
        .split("VmHWM:")
        .nth(1)
        .unwrap()
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .unwrap();
    // The file is 200 MB: holding it, or its entries, would take more than this bound.
    assert!(
        kb < 128 * 1024,
        "peak RSS {kb} kB reading a {size}-byte HAR"
    );
    assert!(line.contains(" over_cap="), "{line}");
    assert!(!line.contains("verdicts=0 "), "nothing judged: {line}");
    assert!(
        !line.contains("over_cap=0 "),
        "the 16 MiB cap was never hit: {line}"
    );
}
