//! Tests of `console`.

use super::*;
use std::sync::Arc;

/// A sink the test reads back.
#[derive(Clone, Default)]
struct Buf(Arc<Mutex<Vec<u8>>>);

impl Write for Buf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Buf {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// One shared sink for stdout and stderr, as a CI log is.
fn console(quiet: bool, verbose: bool, err_tty: bool) -> (Console, Buf) {
    let log = Buf::default();
    let c = Console::with_sinks(
        ConsoleOptions {
            quiet,
            verbose,
            color: Color::Never,
            heartbeat: Duration::ZERO,
            ..Default::default()
        },
        Box::new(log.clone()),
        false,
        Box::new(log.clone()),
        err_tty,
    );
    (c, log)
}

fn result(name: &str, status: Status) -> ScenarioResult {
    ScenarioResult {
        name: name.into(),
        suite: "s".into(),
        suite_file: "suites/s.yaml".into(),
        scenario: name.into(),
        type_name: None,
        row: None,
        at: "suites/s.yaml:1:1".into(),
        status,
        duration_ms: 0,
        cleanup_ms: None,
        verdicts: Vec::new(),
        polls: Vec::new(),
        notes: Vec::new(),
        exchanges: Vec::new(),
        stated: Vec::new(),
        transcript: None,
    }
}

fn na(reason: &str) -> Status {
    Status::Skipped(format!("not applicable: {reason}"))
}

#[test]
fn not_applicable_tests_are_one_line_per_reason_and_each_with_verbose() {
    let (c, log) = console(false, false, false);
    c.title(5, 4);
    for (i, why) in [
        "needs tasks",
        "needs identity",
        "needs tasks",
        "needs tasks",
    ]
    .iter()
    .enumerate()
    {
        c.finished(&result(&format!("t{i}"), na(why)));
    }
    c.finished(&result(
        "kept",
        Status::Skipped("ignored: flaky upstream".into()),
    ));
    c.skipped_summary();
    let text = log.text();
    assert!(
        text.contains("ignored, not applicable: needs tasks — 3 tests\n"),
        "{text}"
    );
    assert!(
        text.contains("ignored, not applicable: needs identity — 1 test\n"),
        "{text}"
    );
    assert!(!text.contains("test t0 ..."), "{text}");
    // A suite's `ignore:` keeps its libtest line.
    assert!(
        text.contains("test kept ... ignored, ignored: flaky upstream"),
        "{text}"
    );
    // Said once.
    c.skipped_summary();
    assert_eq!(log.text(), text);

    let (c, log) = console(false, true, false);
    c.finished(&result("t0", na("needs tasks")));
    c.done();
    assert!(
        log.text()
            .contains("test t0 ... ignored, not applicable: needs tasks"),
        "{}",
        log.text()
    );
}

#[test]
fn without_a_terminal_there_is_no_carriage_return_and_a_heartbeat_ends_the_dots_first() {
    let (c, log) = console(true, false, false);
    c.title(3, 4);
    c.started("a", Duration::from_secs(1));
    c.started("b", Duration::from_secs(1));
    c.finished(&result("a", Status::Passed));
    c.tick();
    c.status("deleting 3 resources");
    c.note("SLOW [> 60s] b");
    c.finished(&result("b", Status::Failed));
    c.done();
    let text = log.text();
    assert!(!text.contains('\r'), "{text:?}");
    assert!(!text.contains('\x1b'), "{text:?}");
    let lines: Vec<&str> = text.lines().collect();
    let beat = lines
        .iter()
        .position(|l| l.starts_with("rpconform: "))
        .unwrap_or_else(|| panic!("no heartbeat in {text:?}"));
    assert_eq!(lines[beat - 1], ".", "{text:?}");
    assert!(lines.contains(&"SLOW [> 60s] b"), "{text:?}");
    assert!(lines.contains(&"F"), "{text:?}");
}

#[test]
fn in_a_terminal_the_live_line_is_redrawn_in_place() {
    let (c, log) = console(false, false, true);
    c.title(1, 1);
    c.started("a", Duration::from_secs(1));
    c.tick();
    assert!(log.text().contains("\r\x1b[2K"), "{:?}", log.text());
    c.finished(&result("a", Status::Passed));
    assert!(
        log.text().ends_with("\r\x1b[2Ktest a ... ok\n"),
        "{:?}",
        log.text()
    );
}
