//! Bearer tokens from the target's `auth`: none, an environment variable, a command (such as
//! `az account get-access-token --query accessToken -o tsv`) run again before the cached token
//! gets old, or a file that something else keeps fresh (CI's workload identity federation).
//! Every token is registered with the redactor the moment it is read, and no error message
//! carries one.
//!
//! # The token command
//!
//! - It runs as `sh -c COMMAND` in a session and process group of its own (`setsid`), with
//!   stdin closed, so a prompt fails instead of waiting on the terminal, and so the whole group
//!   (the shell *and* whatever it started) can be killed: on timeout (`auth.timeout`, default
//!   [`DEFAULT_COMMAND_TIMEOUT`]), when the run is interrupted ([`TokenSource::cancel`]), when
//!   the command prints more than [`OUTPUT_CAP`], when the fetch is dropped, and once the shell
//!   has exited (nothing it left behind outlives the fetch).
//! - One fetch at a time: callers that need a token while a fetch runs wait for that fetch and
//!   all get its outcome (single flight). A failure is also handed to callers arriving within
//!   [`FAILURE_REUSE`] after it, so a failing or hanging command is not run once per request.
//!   Once the run is interrupted, a failure is the answer for the rest of the run, and a new
//!   fetch (teardown and cleanup need a token) is given at most [`INTERRUPTED_TIMEOUT`].
//! - A failure is one message that says why (exit status, timeout, output too long, output
//!   that is not a bare token: JSON, several lines, `Bearer ...`) and ends with the last
//!   [`STDERR_TAIL`] bytes of the command's stderr (`az: command not found`, `Please run 'az
//!   login'`), redacted.
//!
//! # The token file
//!
//! `auth: {token_file: PATH, refresh: SECONDS}`: the file is read (at most [`OUTPUT_CAP`]
//! bytes; it must be a regular file) on first use, again whenever its modification time or
//! size changes (checked on every request: one `stat`), and at least every `refresh` seconds
//! (default [`DEFAULT_FILE_REFRESH`]). While a writer has left it empty for a moment, the last
//! token read is used.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use marked_yaml::Node;
use tokio::io::AsyncReadExt;
use tokio::sync::{Notify, watch};

use super::Redactor;
use crate::target::Auth;
use crate::yaml::Reader;

/// How long a token command may run.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a command's token is used before the command runs again.
pub const DEFAULT_COMMAND_REFRESH: Duration = Duration::from_secs(45 * 60);
/// A token file is read again at least this often, even when it looks unchanged.
pub const DEFAULT_FILE_REFRESH: Duration = Duration::from_secs(60);
/// Most bytes of a command's stdout (or of a token file) read: a token is a few KiB at most.
pub const OUTPUT_CAP: usize = 64 * 1024;
/// Bytes of a failed command's stderr (its end) shown in the error.
pub const STDERR_TAIL: usize = 4 * 1024;
/// A failed fetch is the answer for callers arriving this soon after it.
pub const FAILURE_REUSE: Duration = Duration::from_secs(5);
/// How long the output pipes are read after the command's shell has exited.
const DRAIN_GRACE: Duration = Duration::from_secs(1);
/// Once the run is interrupted, a fetch (for teardown and cleanup) may take at most this long.
pub const INTERRUPTED_TIMEOUT: Duration = Duration::from_secs(10);

/// Read a target file's `auth` value into an [`Auth`]:
///
/// - `none`
/// - `{bearer_env: VAR}`
/// - `{command: "...", refresh: SECONDS, timeout: SECONDS}`: `refresh` defaults to 45 min,
///   `timeout` to 30 s
/// - `{token_file: PATH, refresh: SECONDS}`: `refresh` defaults to 60 s; a relative PATH is
///   relative to the target file's directory
///
/// Mistakes are recorded in `r` (positioned); `None` then.
pub fn parse_auth(r: &mut Reader, n: &Node) -> Option<Auth> {
    if n.as_scalar().is_some_and(|s| s.as_str() == "none") {
        return Some(Auth::None);
    }
    let m = r.map(
        n,
        "auth",
        &["bearer_env", "command", "token_file", "refresh", "timeout"],
    )?;
    let seconds = |r: &mut Reader, key: &str| -> Option<Option<Duration>> {
        match m.get(key) {
            None => Some(None),
            Some(x) => match r.u64(x, &format!("{key} (seconds)"))? {
                0 => {
                    r.error(x, format!("{key} must be at least 1 second"), None);
                    None
                }
                s if s > 86_400 => {
                    r.error(x, format!("{key} must be at most 86400 seconds"), None);
                    None
                }
                s => Some(Some(Duration::from_secs(s))),
            },
        }
    };
    let refresh = seconds(r, "refresh");
    let timeout = seconds(r, "timeout");
    let (refresh, timeout) = (refresh?, timeout?);
    let only_for = |r: &mut Reader, key: &str, modes: &str| {
        if let Some(x) = m.get(key) {
            r.error(x, format!("`{key}` applies only to {modes}"), None);
        }
    };
    match (m.get("bearer_env"), m.get("command"), m.get("token_file")) {
        (Some(e), None, None) => {
            only_for(r, "refresh", "`command` and `token_file`");
            only_for(r, "timeout", "`command`");
            r.string(e, "bearer_env").map(Auth::BearerEnv)
        }
        (None, Some(c), None) => r.string(c, "command").map(|command| Auth::Command {
            command,
            refresh: refresh.unwrap_or(DEFAULT_COMMAND_REFRESH),
            timeout: timeout.unwrap_or(DEFAULT_COMMAND_TIMEOUT),
        }),
        (None, None, Some(f)) => {
            only_for(r, "timeout", "`command`");
            let p = PathBuf::from(r.string(f, "token_file")?);
            let path = match r.file.parent() {
                Some(dir) if p.is_relative() => dir.join(p),
                _ => p,
            };
            Some(Auth::TokenFile {
                path,
                refresh: refresh.unwrap_or(DEFAULT_FILE_REFRESH),
            })
        }
        _ => {
            r.error(
                n,
                "auth needs exactly one of `bearer_env`, `command` or `token_file`",
                Some(
                    "auth: {bearer_env: RP_TOKEN}, or {command: \"az account get-access-token --query accessToken -o tsv\"}"
                        .into(),
                ),
            );
            None
        }
    }
}

/// Gets bearer tokens for the run's requests. Clones share the cached token and the fetch in
/// flight (the preflight checks the very token the run then uses).
#[derive(Clone)]
pub struct TokenSource {
    inner: Arc<Inner>,
}

struct Inner {
    auth: Auth,
    redactor: Arc<Redactor>,
    state: Mutex<State>,
    /// Every token handed out so far (the newest last; a few at most).
    seen: Mutex<Vec<String>>,
    /// Bumped by [`TokenSource::cancel`]; a fetch started in an older epoch stops.
    epoch: AtomicU64,
    cancelled: Notify,
}

type Outcome = Option<Result<String, String>>;

#[derive(Default)]
struct State {
    token: Option<(String, Instant)>,
    failure: Option<(String, Instant)>,
    /// The fetch under way, whose outcome every caller waits for.
    flight: Option<watch::Receiver<Outcome>>,
    /// Modification time and size of the token file when last read.
    file_stamp: Option<(Option<SystemTime>, u64)>,
}

impl TokenSource {
    pub fn new(auth: Auth, redactor: Arc<Redactor>) -> Self {
        TokenSource {
            inner: Arc::new(Inner {
                auth,
                redactor,
                state: Mutex::new(State::default()),
                seen: Mutex::new(Vec::new()),
                epoch: AtomicU64::new(0),
                cancelled: Notify::new(),
            }),
        }
    }

    /// The current token, or `None` for unauthenticated targets. Errors are redacted.
    pub async fn token(&self) -> Result<Option<String>, String> {
        let inner = &self.inner;
        let result = match &inner.auth {
            Auth::None => return Ok(None),
            Auth::BearerEnv(var) => match std::env::var(var) {
                Err(_) => Err(format!("auth: environment variable {var} is not set")),
                Ok(t) => check_token(&t, &format!("environment variable {var}"), &inner.redactor),
            },
            Auth::Command {
                command,
                refresh,
                timeout,
            } => inner.command_token(command, *refresh, *timeout).await,
            Auth::TokenFile { path, refresh } => inner.file_token(path, *refresh),
        };
        match result {
            Ok(t) => {
                inner.redactor.register(&t);
                let mut seen = inner.seen.lock().unwrap_or_else(|e| e.into_inner());
                if !seen.contains(&t) {
                    // A long run refreshes its token every hour or so: keep the last few.
                    if seen.len() >= 16 {
                        seen.remove(0);
                    }
                    seen.push(t.clone());
                }
                Ok(Some(t))
            }
            Err(e) => Err(inner.redactor.text(&e)),
        }
    }

    /// The tokens handed out so far, oldest first (what a URL a server handed out may carry).
    pub fn seen(&self) -> Vec<String> {
        self.inner
            .seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The run is interrupted: kill a running token command's process group now (its
    /// waiters get an error). Later fetches (teardown, cleanup) may run again.
    pub fn cancel(&self) {
        self.inner.epoch.fetch_add(1, Ordering::SeqCst);
        self.inner.cancelled.notify_waiters();
    }
}

impl Inner {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    async fn command_token(
        self: &Arc<Self>,
        command: &str,
        refresh: Duration,
        timeout: Duration,
    ) -> Result<String, String> {
        let mut rx = {
            let mut st = self.state();
            if let Some((t, at)) = &st.token
                && at.elapsed() < refresh
            {
                return Ok(t.clone());
            }
            // After an interruption a failure stands for the rest of the run: teardown and
            // cleanup must not wait for the command again.
            let interrupted = self.epoch.load(Ordering::SeqCst) > 0;
            if let Some((e, at)) = &st.failure
                && (interrupted || at.elapsed() < FAILURE_REUSE)
            {
                return Err(e.clone());
            }
            match &st.flight {
                Some(rx) => rx.clone(),
                None => {
                    let (tx, rx) = watch::channel(None);
                    st.flight = Some(rx.clone());
                    let epoch = self.epoch.load(Ordering::SeqCst);
                    let timeout = if interrupted {
                        timeout.min(INTERRUPTED_TIMEOUT)
                    } else {
                        timeout
                    };
                    tokio::spawn(fetch(self.clone(), command.to_string(), timeout, epoch, tx));
                    rx
                }
            }
        };
        match rx.wait_for(Option::is_some).await {
            Ok(v) => v.clone().unwrap_or_else(|| Err("auth: no token".into())),
            Err(_) => Err("auth: the token fetch was abandoned (the run is ending)".into()),
        }
    }

    fn file_token(&self, path: &Path, refresh: Duration) -> Result<String, String> {
        let shown = path.display();
        let meta = std::fs::metadata(path);
        let mut st = self.state();
        let stamp = meta.as_ref().ok().map(|m| (m.modified().ok(), m.len()));
        if let Some((t, at)) = &st.token
            && stamp.is_some()
            && stamp == st.file_stamp
            && at.elapsed() < refresh
        {
            return Ok(t.clone());
        }
        let read = match meta {
            Err(e) => Err(format!("auth: cannot read token_file {shown}: {e}")),
            Ok(_) => crate::yaml::read_text(path, OUTPUT_CAP)
                .map_err(|e| format!("auth: cannot use token_file {shown}: {e}"))
                .and_then(|text| {
                    check_token(&text, &format!("token_file {shown}"), &self.redactor)
                }),
        };
        match read {
            Ok(t) => {
                st.token = Some((t.clone(), Instant::now()));
                st.file_stamp = stamp;
                Ok(t)
            }
            // A writer replacing the file may leave it missing or empty for a moment: keep
            // the last token while it is younger than `refresh`.
            Err(e) => match &st.token {
                Some((t, at)) if at.elapsed() < refresh => Ok(t.clone()),
                _ => Err(e),
            },
        }
    }
}

/// The fetch task: run the command, record the outcome, wake every waiter.
async fn fetch(
    inner: Arc<Inner>,
    command: String,
    timeout: Duration,
    epoch: u64,
    tx: watch::Sender<Outcome>,
) {
    /// Clears the flight even when the task is dropped (runtime shutdown).
    struct Landing<'a>(&'a Inner);
    impl Drop for Landing<'_> {
        fn drop(&mut self) {
            self.0.state().flight = None;
        }
    }
    let landing = Landing(&inner);
    let cancelled = async {
        loop {
            let notified = inner.cancelled.notified();
            if inner.epoch.load(Ordering::SeqCst) != epoch {
                return;
            }
            notified.await;
        }
    };
    let result = run_command(&command, timeout, cancelled)
        .await
        .and_then(|out| check_token(&out, "the token command", &inner.redactor));
    {
        let mut st = inner.state();
        match &result {
            Ok(t) => {
                st.token = Some((t.clone(), Instant::now()));
                st.failure = None;
            }
            Err(e) => st.failure = Some((inner.redactor.text(e), Instant::now())),
        }
    }
    if let Ok(t) = &result {
        inner.redactor.register(t);
    }
    drop(landing);
    let _ = tx.send(Some(result.map_err(|e| inner.redactor.text(&e))));
}

/// Kills a process group (SIGKILL) when asked or dropped, once.
struct Group(Option<u32>);

impl Group {
    fn kill(&mut self) {
        #[cfg(unix)]
        if let Some(pgid) = self.0.take()
            && let Ok(pgid) = i32::try_from(pgid)
            && pgid > 1
        {
            // SAFETY: kill(2) with a negative pid signals a process group; no memory is touched.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
        self.0 = None;
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The last `cap` bytes written to it.
struct Tail {
    buf: Vec<u8>,
    cap: usize,
    dropped: bool,
}

impl Tail {
    fn push(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
        if self.buf.len() > self.cap {
            let cut = self.buf.len() - self.cap;
            self.buf.drain(..cut);
            self.dropped = true;
        }
    }

    /// The text, indented, after a line saying what it is; empty when there is none.
    fn render(&self) -> String {
        let text = String::from_utf8_lossy(&self.buf);
        let text = text.trim();
        if text.is_empty() {
            return "; it wrote nothing to stderr".into();
        }
        let lines: Vec<String> = text.lines().map(|l| format!("    {l}")).collect();
        format!(
            "; its stderr{}:\n{}",
            if self.dropped { " ends with" } else { " says" },
            lines.join("\n")
        )
    }
}

/// Run `sh -c command` in its own process group; its stdout, or why not.
async fn run_command(
    command: &str,
    timeout: Duration,
    cancelled: impl Future<Output = ()>,
) -> Result<String, String> {
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    // SAFETY: setsid(2) is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("auth: cannot run the token command: {e}"))?;
    let mut group = Group(child.id());
    let (Some(mut out_pipe), Some(mut err_pipe)) = (child.stdout.take(), child.stderr.take())
    else {
        return Err("auth: cannot read the token command's output".into());
    };
    let mut out: Vec<u8> = Vec::new();
    let mut err = Tail {
        buf: Vec::new(),
        cap: STDERR_TAIL,
        dropped: false,
    };
    let (mut out_open, mut err_open) = (true, true);
    let mut status = None;
    let mut out_chunk = vec![0u8; 8192];
    let mut err_chunk = vec![0u8; 8192];
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    tokio::pin!(cancelled);
    let problem: Option<String> = loop {
        tokio::select! {
            r = out_pipe.read(&mut out_chunk), if out_open => match r {
                Ok(0) | Err(_) => out_open = false,
                Ok(n) => {
                    out.extend_from_slice(&out_chunk[..n]);
                    if out.len() > OUTPUT_CAP {
                        break Some(format!(
                            "printed more than {} KiB on stdout (a token is one line of a few KiB); it was stopped",
                            OUTPUT_CAP / 1024
                        ));
                    }
                }
            },
            r = err_pipe.read(&mut err_chunk), if err_open => match r {
                Ok(0) | Err(_) => err_open = false,
                Ok(n) => err.push(&err_chunk[..n]),
            },
            s = child.wait(), if status.is_none() => {
                status = Some(s);
                // The shell is done: whatever it left running in its group (holding the
                // pipes open, say) goes too, so the pipes end. A process that left the group
                // and holds them gets a moment, not the whole timeout.
                group.kill();
                let grace = tokio::time::Instant::now() + DRAIN_GRACE;
                if grace < deadline.deadline() {
                    deadline.as_mut().reset(grace);
                }
            },
            _ = &mut deadline => {
                if status.is_some() {
                    break None;
                }
                break Some(format!(
                    "did not finish within {} s (auth `timeout`); it was killed with its process group",
                    timeout.as_secs()
                ));
            },
            _ = &mut cancelled => break Some(
                "was stopped: the run was interrupted".to_string()
            ),
        }
        if status.is_some() && !out_open && !err_open {
            break None;
        }
    };
    group.kill();
    if let Some(p) = problem {
        let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
        return Err(format!("auth: the token command {p}{}", err.render()));
    }
    match status {
        Some(Ok(s)) if s.success() => {}
        Some(Ok(s)) => {
            return Err(format!(
                "auth: the token command failed ({s}){}",
                err.render()
            ));
        }
        Some(Err(e)) => return Err(format!("auth: waiting for the token command: {e}")),
        None => return Err("auth: the token command did not end".into()),
    }
    String::from_utf8(out).map_err(|_| {
        format!(
            "auth: the token command printed bytes that are not UTF-8{}",
            err.render()
        )
    })
}

/// A token as read (from a command, a file or a variable), or why it cannot be one. Values
/// that look like tokens inside rejected output are registered with the redactor, since the
/// output held a credential even when it was not usable as one.
fn check_token(raw: &str, from: &str, redactor: &Redactor) -> Result<String, String> {
    let t = raw.trim();
    if t.is_empty() {
        return Err(format!("auth: {from} is empty (no token)"));
    }
    if t.starts_with('{') || t.starts_with('[') || t.starts_with('"') {
        let mut keys: Vec<String> = Vec::new();
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(t) {
            register_json_tokens(&v, redactor);
            if let Some(m) = v.as_object() {
                keys = m
                    .keys()
                    .filter(|k| {
                        k.len() <= 32 && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                    })
                    .take(8)
                    .cloned()
                    .collect();
            }
        }
        let what = if keys.is_empty() {
            "JSON".to_string()
        } else {
            format!("JSON (an object with keys {})", keys.join(", "))
        };
        return Err(format!(
            "auth: {from} holds {what}, not a bare token; print only the token, e.g. \
             `az account get-access-token --query accessToken -o tsv`"
        ));
    }
    for word in t.split_whitespace().filter(|w| w.len() >= 16) {
        redactor.register(word);
    }
    if let Some((scheme, _)) = t.split_once(' ')
        && scheme.eq_ignore_ascii_case("bearer")
    {
        return Err(format!(
            "auth: {from} holds `Bearer <token>`; give the token alone (rpconform adds `Bearer `)"
        ));
    }
    if t.contains(char::is_whitespace) {
        let lines = t.lines().count();
        let shape = if lines > 1 {
            format!("{lines} lines")
        } else {
            "text with spaces".into()
        };
        return Err(format!(
            "auth: {from} holds {shape}, not a single token; print only the token \
             (with az: `--query accessToken -o tsv`)"
        ));
    }
    if !t.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!(
            "auth: {from} holds characters a token cannot have (control or non-ASCII characters)"
        ));
    }
    Ok(t.to_string())
}

/// Register the values of token-like keys (`accessToken`, `refresh_token`...) of a JSON
/// document.
fn register_json_tokens(v: &serde_json::Value, redactor: &Redactor) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let k = k.to_ascii_lowercase();
                if let Some(s) = x.as_str()
                    && (k.contains("token") || k.contains("secret") || k.contains("password"))
                    && !k.contains("type")
                {
                    redactor.register(s);
                } else {
                    register_json_tokens(x, redactor);
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| register_json_tokens(x, redactor)),
        serde_json::Value::String(s) if s.len() >= 16 => redactor.register(s),
        _ => {}
    }
}

#[cfg(test)]
#[path = "auth_tests.rs"]
mod tests;
