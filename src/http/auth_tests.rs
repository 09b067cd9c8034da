//! Tests of `auth`.

use super::*;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn outputs_that_are_not_a_token() {
    let r = Redactor::new(&[]);
    let az = r#"{"accessToken": "eyJ0eXAiOiJKV1QifQ.eyJzdWIiOiJ4eHh4eHh4eCJ9.c2lnbmF0dXJlLXh4eHg", "expiresOn": "2030-01-01", "tokenType": "Bearer"}"#;
    let e = check_token(az, "the token command", &r).unwrap_err();
    assert!(
        e.contains("JSON (an object with keys accessToken, expiresOn, tokenType)"),
        "{e}"
    );
    assert!(e.contains("--query accessToken -o tsv"), "{e}");
    assert!(!e.contains("eyJ0eXAi"), "{e}");
    assert!(r.has_secret("c2lnbmF0dXJlLXh4eHg-and-more"));
    let e = check_token("WARNING: x\nabcdefghijklmnopqrstuvwxyz\n", "it", &r).unwrap_err();
    assert!(e.contains("2 lines"), "{e}");
    assert!(r.has_secret("abcdefghijklmnopqrstuvwxyz"));
    let e = check_token("Bearer abc", "it", &r).unwrap_err();
    assert!(e.contains("`Bearer <token>`"), "{e}");
    assert!(check_token("tok\u{7}en", "it", &r).is_err());
    assert!(check_token("  \n", "it", &r).unwrap_err().contains("empty"));
    assert_eq!(
        check_token("  tok-en.1_2\n", "it", &r).unwrap(),
        "tok-en.1_2"
    );
}

#[test]
fn a_failing_command_says_why_with_its_stderr() {
    let e = rt()
        .block_on(run_command(
            "echo 'Please run az login' >&2; exit 3",
            Duration::from_secs(10),
            std::future::pending(),
        ))
        .unwrap_err();
    assert!(e.contains("exit status: 3"), "{e}");
    assert!(e.contains("Please run az login"), "{e}");
}

#[test]
fn endless_output_is_cut() {
    let started = Instant::now();
    let e = rt()
        .block_on(run_command(
            "yes",
            Duration::from_secs(20),
            std::future::pending(),
        ))
        .unwrap_err();
    assert!(e.contains("more than 64 KiB"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_daemon_holding_the_pipe_does_not_hold_the_fetch() {
    // The child leaves the process group (setsid) and keeps stdout open; the shell
    // printed the token and exited.
    let started = Instant::now();
    let out = rt()
        .block_on(run_command(
            "echo tok-123; setsid sleep 5 &",
            Duration::from_secs(20),
            std::future::pending(),
        ))
        .unwrap();
    assert_eq!(out.trim(), "tok-123");
    assert!(started.elapsed() < Duration::from_secs(4));
}

fn parse(text: &str) -> (Option<Auth>, Vec<String>) {
    let file: Arc<Path> = Arc::from(Path::new("/etc/rp/target.yaml"));
    let root = crate::yaml::parse(&file, text).unwrap();
    let node = root.as_mapping().unwrap().get_node("auth").unwrap().clone();
    let mut r = Reader::new(file);
    let a = parse_auth(&mut r, &node);
    (
        a,
        r.diags
            .iter()
            .map(|d| format!("{}: {}", d.pos, d.message))
            .collect(),
    )
}

#[test]
fn auth_keys() {
    assert_eq!(
        parse("auth: {command: az x, timeout: 5}").0,
        Some(Auth::Command {
            command: "az x".into(),
            refresh: DEFAULT_COMMAND_REFRESH,
            timeout: Duration::from_secs(5),
        })
    );
    assert_eq!(
        parse("auth: {token_file: tok, refresh: 9}").0,
        Some(Auth::TokenFile {
            path: PathBuf::from("/etc/rp/tok"),
            refresh: Duration::from_secs(9),
        })
    );
    assert_eq!(parse("auth: none").0, Some(Auth::None));
    let (_, d) = parse("auth: {bearer_env: T, timeout: 5}");
    assert!(
        d[0].contains(":1:32: `timeout` applies only to `command`"),
        "{d:?}"
    );
    let (_, d) = parse("auth: {command: x, timeout: 0}");
    assert!(d[0].contains("at least 1 second"), "{d:?}");
    let (a, d) = parse("auth: {command: x, token_file: y}");
    assert!(a.is_none() && d[0].contains("exactly one of"), "{d:?}");
}

#[test]
fn stderr_keeps_its_end() {
    let mut t = Tail {
        buf: Vec::new(),
        cap: 8,
        dropped: false,
    };
    t.push(b"0123456789");
    t.push(b"ab");
    assert_eq!(t.buf, b"456789ab");
    assert!(t.render().contains("ends with"));
}
