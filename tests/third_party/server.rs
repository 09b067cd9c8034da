//! Starting and stopping the third-party mock servers (npm packages) for the end-to-end tests:
//! on a free port of 127.0.0.1 through the start scripts beside this file, stopped when the
//! handle drops. Without Node.js and npm the tests are skipped with a loud message, unless
//! `RPCONFORM_REQUIRE_THIRD_PARTY=1` (set in CI), which turns the skip into a failure.

#![allow(dead_code)] // each test binary uses a different subset

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

pub fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("third_party")
        .join(name)
}

/// Under CI (`CI` true, or `RPCONFORM_REQUIRE_THIRD_PARTY=1`) a missing server fails the test.
fn required() -> bool {
    std::env::var("RPCONFORM_REQUIRE_THIRD_PARTY").is_ok_and(|v| v == "1") || crate::common::in_ci()
}

/// Skip (or, in CI, fail) with a message nobody can miss.
pub fn skip(why: &str) {
    let msg = format!(
        "\n\n==================== SKIPPED ====================\n{why}\n\
         Install Node.js (>= 20) with npm to run this test; CI sets RPCONFORM_REQUIRE_THIRD_PARTY=1\n\
         and fails instead of skipping.\n=================================================\n"
    );
    if required() {
        panic!("{msg}");
    }
    crate::common::skipped(why.lines().next().unwrap_or(why).to_string());
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A free TCP port on 127.0.0.1 (the OS picks it; it is free when this returns).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port on 127.0.0.1")
}

/// A server started by one of the scripts, stopped on drop.
pub struct Server {
    pub base: String,
    script: PathBuf,
    port: u16,
}

impl Server {
    /// Start `script` on a free port; None (after the loud skip message) when Node.js or npm
    /// is missing or the server cannot be installed/started here.
    pub fn start(script_name: &str, what: &str) -> Option<Server> {
        if !have("node") || !have("npm") {
            skip(&format!("{what}: node and npm are not installed"));
            return None;
        }
        let port = free_port();
        let script = script(script_name);
        let out = Command::new("bash")
            .arg(&script)
            .arg(port.to_string())
            .env(
                "RPCONFORM_TP_TIMEOUT",
                std::env::var("RPCONFORM_TP_TIMEOUT").unwrap_or_else(|_| "120".into()),
            )
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
        if !out.status.success() {
            skip(&format!(
                "{what}: {} {port} failed:\n{}\n{}",
                script.display(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
            return None;
        }
        // Give the server a moment past its first answer.
        std::thread::sleep(Duration::from_millis(200));
        Some(Server {
            base: format!("http://127.0.0.1:{port}"),
            script,
            port,
        })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(&self.script)
            .arg(self.port.to_string())
            .arg("--stop")
            .output();
    }
}
