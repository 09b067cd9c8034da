//! Tests of the journal: written, read back, masked, damaged, refused.

use super::lines::now;
use super::token::COMPONENT;
use super::*;
use crate::http::Surface;
use crate::runner::tracked::Tracked;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

fn header(id: &str) -> Header {
    Header {
        version: 1,
        run_id: id.into(),
        target: "t.yaml".into(),
        target_file: Some("/x/t.yaml".into()),
        base_url: "http://127.0.0.1:1".into(),
        subscription: "s".into(),
        resource_group: format!("rg-{id}"),
        rg_created: true,
        started_at: now(),
        // No process has it: the run is over.
        pid: u32::MAX,
    }
}

fn tracked(url: &str) -> Tracked {
    Tracked {
        url: url.into(),
        api_version: Some("2024-01-01".into()),
        surface: Surface::Arm,
        by: "t".into(),
        maybe_gone: false,
        left: None,
        waited: false,
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rpconform-journal-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn the_base_urls_password_never_reaches_the_journal() {
    let dir = scratch("userinfo");
    let (j, _) = Journal::create(&dir, &header("ccc")).unwrap();
    let rg = "http://me:p%40ss-w0rd@127.0.0.1:1/subscriptions/s/resourceGroups/rg-ccc";
    j.group(rg, "2021-04-01");
    j.put(&tracked(&format!("{rg}/p/a")));
    j.put(&tracked(&format!("{rg}/p/b")));
    j.gone(&format!("{rg}/p/a"));
    j.left(&format!("{rg}/p/b"), "still there");
    drop(j);
    let p = dir.join("journal-ccc.jsonl");
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(
        !text.contains("p%40ss-w0rd") && !text.contains("p@ss-w0rd") && !text.contains("me:"),
        "{text}"
    );
    // Still one resource, cleaned by its URL (the credential comes from the target file).
    let o = read(&p).unwrap();
    let urls: Vec<&str> = o.resources.iter().map(|t| t.url.as_str()).collect();
    assert_eq!(
        urls,
        ["http://127.0.0.1:1/subscriptions/s/resourceGroups/rg-ccc/p/b"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_token_a_server_put_in_a_url_is_kept_masked_and_put_back_for_cleanup() {
    let dir = scratch("token-mask");
    let (j, _) = Journal::create(&dir, &header("tok")).unwrap();
    let token = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.c2ln+/=";
    let other = "hunter2-api-key";
    let redactor = std::sync::Arc::new(crate::http::Redactor::new(&[]));
    redactor.register(token);
    redactor.register(other);
    let (r, tokens) = (redactor.clone(), vec![token.to_string()]);
    j.set_masker(move |u| token_mask(u, &tokens, &r));
    let encoded = percent_encoding::utf8_percent_encode(token, COMPONENT).to_string();
    let base = "http://127.0.0.1:1/subscriptions/s/resourceGroups/rg-tok/providers/N/w";
    let in_path = format!("{base}/{token}");
    let in_query_form = format!("{base}/x{encoded}y");
    let with_other = format!("{base}/{other}");
    for u in [&in_path, &in_query_form, &with_other] {
        j.put(&tracked(u));
    }
    drop(j);
    let p = dir.join("journal-tok.jsonl");
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(
        !text.contains(token) && !text.contains(&encoded) && !text.contains(other),
        "{text}"
    );
    let o = read(&p).unwrap();
    let back: Vec<Result<String, String>> = o
        .resources
        .iter()
        .map(|t| token_unmask(&t.url, Some(token)))
        .collect();
    assert_eq!(back[0].as_deref(), Ok(in_path.as_str()));
    assert_eq!(back[1].as_deref(), Ok(in_query_form.as_str()));
    // A secret that is not the caller's token cannot be put back: never sent masked.
    assert!(back[2].as_ref().unwrap_err().contains("delete it by hand"));
    // No token now: a URL that held one is not sent either.
    assert!(token_unmask(&o.resources[0].url, None).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn outstanding_is_what_was_put_and_not_confirmed_gone() {
    let dir = scratch("outstanding");
    let (j, earlier) = Journal::create(&dir, &header("aaa")).unwrap();
    assert!(earlier.is_empty());
    assert_eq!(j.path(), dir.join("journal-aaa.jsonl"));
    let rg = "http://127.0.0.1:1/subscriptions/s/resourceGroups/rg-aaa";
    j.group(rg, "2021-04-01");
    j.put(&tracked(&format!("{rg}/p/a")));
    j.put(&tracked(&format!("{rg}/p/a/c/x")));
    j.put(&tracked(&format!("{rg}/p/b")));
    j.put(&tracked("http://127.0.0.1:1/dataplane/widgets/w1"));
    j.gone(&format!("{rg}/p/A"));
    j.left(&format!("{rg}/p/b"), "still there");
    drop(j);
    // A torn last line is ignored.
    let p = dir.join("journal-aaa.jsonl");
    let mut f = OpenOptions::new().append(true).open(&p).unwrap();
    f.write_all(b"{\"event\":\"gone\",\"ur").unwrap();
    let o = read(&p).unwrap();
    let urls: Vec<&str> = o.resources.iter().map(|t| t.url.as_str()).collect();
    assert_eq!(
        urls,
        vec![
            format!("{rg}/p/b").as_str(),
            "http://127.0.0.1:1/dataplane/widgets/w1"
        ]
    );
    assert!(o.group.is_some() && !o.ended && o.damaged.is_empty());
    // A new run writes a journal of its own and names the unfinished one.
    let (j2, earlier) = Journal::create(&dir, &header("bbb")).unwrap();
    assert_eq!(earlier, vec![p.clone()]);
    j2.end(0, false);
    let found = find(&dir).unwrap();
    assert_eq!(found.len(), 2);
    // The group gone takes everything in it.
    let j = Journal::append(&p).unwrap();
    j.gone(rg);
    drop(j);
    let o = read(&p).unwrap();
    assert_eq!(o.resources.len(), 1);
    assert!(o.group.is_none());
    // A run that ended with nothing outstanding is tidied away by the next one.
    drop(j2);
    let (_j3, _) = Journal::create(&dir, &header("ccc")).unwrap();
    assert!(!dir.join("journal-bbb.jsonl").exists());
    assert!(p.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn two_runs_in_one_directory_keep_their_own_journals() {
    let dir = scratch("two-runs");
    let mut live = header("one");
    live.pid = std::process::id();
    let (a, _) = Journal::create(&dir, &live).unwrap();
    a.put(&tracked("http://127.0.0.1:1/x/a0"));
    // A run still going is not "an earlier run" to warn about.
    let (b, earlier) = Journal::create(&dir, &header("two")).unwrap();
    assert!(earlier.is_empty(), "{earlier:?}");
    a.put(&tracked("http://127.0.0.1:1/x/a1"));
    b.put(&tracked("http://127.0.0.1:1/x/b1"));
    a.put(&tracked("http://127.0.0.1:1/x/a2"));
    drop((a, b));
    let mut all: Vec<String> = Vec::new();
    for p in find(&dir).unwrap() {
        let o = read(&p).unwrap();
        assert!(o.damaged.is_empty(), "{:?}", o.damaged);
        all.extend(o.resources.into_iter().map(|t| t.url));
    }
    all.sort();
    assert_eq!(
        all,
        [
            "http://127.0.0.1:1/x/a0",
            "http://127.0.0.1:1/x/a1",
            "http://127.0.0.1:1/x/a2",
            "http://127.0.0.1:1/x/b1"
        ]
    );
    // An old single journal.jsonl is still found.
    std::fs::copy(dir.join("journal-one.jsonl"), dir.join(FILE_NAME)).unwrap();
    assert_eq!(find(&dir).unwrap().len(), 3);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_damaged_line_is_skipped_and_named() {
    let dir = scratch("damaged");
    let (j, _) = Journal::create(&dir, &header("ddd")).unwrap();
    j.put(&tracked("http://127.0.0.1:1/x/a"));
    let p = j.path().to_path_buf();
    drop(j);
    let mut f = OpenOptions::new().append(true).open(&p).unwrap();
    f.write_all(b"{\"event\": \"put\", \"url\": 3}\n\xff\xfe garbage\n")
        .unwrap();
    drop(f);
    let j = Journal::append(&p).unwrap();
    j.put(&tracked("http://127.0.0.1:1/x/b"));
    drop(j);
    let o = read(&p).unwrap();
    let urls: Vec<&str> = o.resources.iter().map(|t| t.url.as_str()).collect();
    assert_eq!(urls, ["http://127.0.0.1:1/x/a", "http://127.0.0.1:1/x/b"]);
    assert_eq!(o.damaged.len(), 2, "{:?}", o.damaged);
    assert!(
        o.damaged[0].starts_with(&format!("{}:3:", p.display())),
        "{:?}",
        o.damaged
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(target_os = "linux")]
#[test]
fn a_journal_that_cannot_be_written_refuses_further_puts() {
    // /dev/full: every write fails with "no space left on device".
    let file = OpenOptions::new().append(true).open("/dev/full").unwrap();
    let j = Journal::start(PathBuf::from("/dev/full"), file);
    let told = Arc::new(Mutex::new(Vec::<String>::new()));
    let t2 = told.clone();
    j.on_failure(move |why| t2.lock().unwrap().push(why.to_string()));
    assert!(j.failure().is_none());
    let e = j
        .put_checked(&tracked("http://127.0.0.1:1/x/a"))
        .unwrap_err();
    assert!(e.contains("cannot write the journal"), "{e}");
    assert!(j.put_checked(&tracked("http://127.0.0.1:1/x/b")).is_err());
    // Said once, at once.
    assert_eq!(told.lock().unwrap().len(), 1);
}

#[test]
fn live_and_dead_processes() {
    assert!(process_alive(std::process::id()));
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    assert!(!process_alive(pid));
    assert!(!process_alive(0));
    assert!(!process_alive(u32::MAX));
}
