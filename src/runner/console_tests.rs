//! Tests of `console`.

use super::*;
use indicatif::TermLike;
use std::sync::Arc;

/// A sink the test reads back.
#[derive(Clone, Default, Debug)]
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

    fn put(&self, s: &str) -> std::io::Result<()> {
        self.0.lock().unwrap().extend_from_slice(s.as_bytes());
        Ok(())
    }

    /// A cursor move, as a terminal gets it (none for no move).
    fn cursor(&self, n: usize, dir: char) -> std::io::Result<()> {
        if n == 0 {
            return Ok(());
        }
        self.put(&format!("\x1b[{n}{dir}"))
    }
}

/// A terminal the live line is drawn on: what the bar tells it, written into the log as the
/// escapes a terminal would get (`\r\x1b[2K` clears the row).
#[derive(Debug)]
struct Term(Buf);

impl TermLike for Term {
    fn width(&self) -> u16 {
        60
    }
    fn move_cursor_up(&self, n: usize) -> std::io::Result<()> {
        self.0.cursor(n, 'A')
    }
    fn move_cursor_down(&self, n: usize) -> std::io::Result<()> {
        self.0.cursor(n, 'B')
    }
    fn move_cursor_right(&self, n: usize) -> std::io::Result<()> {
        self.0.cursor(n, 'C')
    }
    fn move_cursor_left(&self, n: usize) -> std::io::Result<()> {
        self.0.cursor(n, 'D')
    }
    fn write_line(&self, s: &str) -> std::io::Result<()> {
        self.0.put(&format!("{s}\n"))
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        self.0.put(s)
    }
    fn clear_line(&self) -> std::io::Result<()> {
        self.0.put("\r\x1b[2K")
    }
    fn flush(&self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One shared sink for stdout and stderr, as a CI log is; `err_tty`: stderr is a terminal.
fn console(quiet: bool, verbose: bool, err_tty: bool) -> (Console, Buf) {
    let log = Buf::default();
    let term = log.clone();
    let live: LiveTarget = if err_tty {
        Box::new(move || ProgressDrawTarget::term_like(Box::new(Term(term.clone()))))
    } else {
        Box::new(ProgressDrawTarget::hidden)
    };
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
        live,
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

/// The log without the spaces the bar pads its row with to the terminal's width.
fn unpadded(log: &Buf) -> String {
    regex::Regex::new(r" +(\r|$)")
        .unwrap()
        .replace_all(&log.text(), "$1")
        .into_owned()
}

#[test]
fn in_a_terminal_the_live_line_is_redrawn_in_place() {
    let (c, log) = console(false, false, true);
    c.title(2, 1);
    // No live line before the first tick.
    assert_eq!(log.text(), "\nrunning 2 tests\n");
    c.started("a", Duration::from_secs(1));
    c.tick();
    let live = "  0/2 done, 0 failed, 1 running, 0.0s elapsed, ETA ~1.0s";
    let clear = "\r\x1b[2K";
    assert_eq!(unpadded(&log), format!("\nrunning 2 tests\n{live}"));
    // A libtest line clears the live line, takes its row, and the live line comes back below;
    // a notice on stderr alike.
    c.finished(&result("a", Status::Passed));
    c.note("SLOW [> 60s] b");
    let text = unpadded(&log);
    assert!(
        text.ends_with(&format!(
            "{live}{clear}test a ... ok\n{live}{clear}SLOW [> 60s] b\n{live}"
        )),
        "{text:?}"
    );
    // Cut to the terminal's width, never wrapped.
    c.status(&"deleting ".repeat(20));
    let row = log.text().rsplit(clear).next().unwrap().to_string();
    assert_eq!(row.chars().count(), 60, "{row:?}");
    // Gone before the final output, and drawn anew after it when asked.
    c.done();
    assert!(log.text().ends_with(clear), "{:?}", log.text());
    c.status("deleting 3 resources");
    assert!(
        unpadded(&log).ends_with(&format!("{clear}  deleting 3 resources")),
        "{:?}",
        log.text()
    );
    c.clear_status_line();
    assert!(log.text().ends_with(clear), "{:?}", log.text());
}

#[test]
fn quiet_or_a_logfile_draws_no_live_line_even_in_a_terminal() {
    let (c, log) = console(true, false, true);
    c.title(1, 1);
    c.started("a", Duration::from_secs(1));
    c.tick();
    c.status("deleting 3 resources");
    assert!(!log.text().contains('\x1b'), "{:?}", log.text());
}
