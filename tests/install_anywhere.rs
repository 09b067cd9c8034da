//! Install anywhere: the binary carries its suites and schemas. Run from an empty directory
//! (no `suites/`, no `schemas/`, a fresh `$HOME`), exactly as after `cargo install --path .`,
//! `rpconform run --target embedded --time-scale 0.05 --hold-reads 3` (README's line) passes and writes its reports there;
//! the built-in set is written to `$HOME/.cache/rpconform/<suite-set id>/` (repaired when a
//! file there is edited, removed or added); `--suites DIR` replaces the set and `--suites +DIR`
//! adds to it, the same for `--schemas`; `--version` names the set. Nothing new is built: these
//! run the test build's own binary (CARGO_BIN_EXE_rpconform).

use crate::common;

use std::path::{Path, PathBuf};

use common::{Output, QUICK_TIMEOUT, RUN_TIMEOUT, Scratch, read_report, rpconform_in};
use rpconform::suiteset;

/// An empty working directory and a fresh home, with no cache setting inherited.
struct Clean {
    dir: Scratch,
}

impl Clean {
    fn new(label: &str) -> Self {
        let dir = Scratch::new(label);
        std::fs::create_dir_all(dir.join("work")).unwrap();
        std::fs::create_dir_all(dir.join("home")).unwrap();
        Clean { dir }
    }

    fn work(&self) -> PathBuf {
        self.dir.join("work")
    }

    /// Where the built-in set lands: `$HOME/.cache/rpconform/<id>`.
    fn cache(&self) -> PathBuf {
        self.dir
            .join("home")
            .join(".cache")
            .join("rpconform")
            .join(suiteset::ID)
    }

    fn run(&self, args: &[&str], timeout: std::time::Duration) -> Output {
        let home = self.dir.str("home");
        // Relative values are ignored: the same as unset.
        rpconform_in(
            &self.work(),
            &[
                ("HOME", home.as_str()),
                ("XDG_CACHE_HOME", ""),
                ("RPCONFORM_CACHE_DIR", ""),
            ],
            args,
            timeout,
        )
    }
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".tmp"))
        .collect();
    v.sort();
    v
}

#[test]
fn from_an_empty_directory_the_built_in_suites_run_and_write_reports() {
    // README's "install anywhere" line, as a newcomer copies it.
    let readme = std::fs::read_to_string(common::root().join("README.md")).unwrap();
    let line = "rpconform run --target embedded --time-scale 0.05 --hold-reads 3";
    assert!(readme.contains(line), "README no longer says `{line}`");
    let c = Clean::new("install-run");
    let mut args: Vec<&str> = line.split(' ').skip(1).collect();
    args.push("-q");
    let out = c.run(&args, RUN_TIMEOUT);
    assert_eq!(out.code(), 0, "a clean run exits 0\n{}", out.tail(3000));

    assert!(
        out.stderr
            .contains(&format!("built-in suite set {}", suiteset::ID)),
        "the run says it uses the built-in set\n{}",
        out.tail(2000)
    );
    let reports = c.work().join("reports");
    for f in ["junit.xml", "report.json", "summary.md"] {
        assert!(
            reports.join(f).is_file(),
            "{f} was not written\n{}",
            out.tail(2000)
        );
    }
    let report = read_report(&reports);
    assert_eq!(
        report["status"]["state"],
        "passed",
        "the newcomer's first run is complete, not incomplete\n{}",
        out.tail(2000)
    );
    let passed = common::count(&report, "passed");
    assert!(
        passed > 100,
        "only {passed} tests passed\n{}",
        out.tail(2000)
    );
    assert_eq!(common::count(&report, "failed"), 0);
    assert_eq!(common::count(&report, "errors"), 0);
    // Reports name suite files relative to the suite set (CI annotations point into the
    // repository), never the cache folder; the suite set is in the provenance.
    let junit = std::fs::read_to_string(reports.join("junit.xml")).unwrap();
    let files: Vec<&str> = junit
        .split("file=\"")
        .skip(1)
        .map(|f| f.split('"').next().unwrap_or_default())
        .collect();
    assert!(!files.is_empty(), "junit.xml has no file= attribute");
    for f in &files {
        assert!(f.starts_with("suites/"), "junit.xml file=\"{f}\"");
    }
    assert_eq!(report["run"]["suite_set"], suiteset::ID);
    // Every suite of the package, as files whose positions errors can name.
    let want: Vec<String> = {
        let mut v: Vec<String> = suiteset::SUITES
            .iter()
            .map(|(n, _)| n.to_string())
            .collect();
        v.sort();
        v
    };
    assert_eq!(names_in(&c.cache().join("suites")), want);
    assert_eq!(
        names_in(&c.cache().join("schemas")).len(),
        suiteset::SCHEMAS.len()
    );
    assert!(
        !c.work().join("suites").exists(),
        "nothing but reports in the working directory"
    );
}

#[test]
fn version_names_the_suite_set() {
    let c = Clean::new("install-version");
    let out = c.run(&["--version"], QUICK_TIMEOUT);
    assert_eq!(out.code(), 0, "{}", out.tail(500));
    let line = out.stdout.trim();
    assert_eq!(
        line,
        format!(
            "rpconform {} (suite set {}: {} suites, {} schemas)",
            env!("CARGO_PKG_VERSION"),
            suiteset::ID,
            suiteset::SUITES.len(),
            suiteset::SCHEMAS.len()
        )
    );
    // The id is a hash of the package's suites and schemas as they are in the checkout.
    for (name, text) in suiteset::SUITES {
        let disk = std::fs::read_to_string(common::suites_dir().join(name)).unwrap();
        assert_eq!(&disk, text, "{name} embedded as it is on disk");
    }
}

#[test]
fn the_cached_copy_is_repaired_before_use() {
    let c = Clean::new("install-repair");
    let out = c.run(&["check"], QUICK_TIMEOUT);
    assert_eq!(out.code(), 0, "{}", out.tail(2000));
    let suites = c.cache().join("suites");
    let etag = suiteset::SUITES
        .iter()
        .find(|(n, _)| *n == "etag.yaml")
        .unwrap()
        .1;
    // Edited and removed files are rewritten in place.
    std::fs::write(suites.join("etag.yaml"), "suite: [broken\n").unwrap();
    std::fs::remove_file(c.cache().join("schemas").join("error-response.json")).unwrap();
    let out = c.run(&["check"], QUICK_TIMEOUT);
    assert_eq!(
        out.code(),
        0,
        "the copy is rewritten, not trusted\n{}",
        out.tail(2000)
    );
    assert!(
        out.stdout
            .contains(&format!("ok: {} suite files", suiteset::SUITES.len())),
        "{}",
        out.tail(2000)
    );
    assert_eq!(
        std::fs::read_to_string(suites.join("etag.yaml")).unwrap(),
        etag
    );
    assert!(
        c.cache()
            .join("schemas")
            .join("error-response.json")
            .is_file()
    );
    // A folder holding a file rpconform did not write is left as it is (it may be someone's
    // work); the set is written beside it, whole, and used from there.
    std::fs::write(suites.join("etag.yaml"), "suite: [broken\n").unwrap();
    std::fs::write(
        suites.join("planted.yaml"),
        "suite: planted\nscenarios: []\n",
    )
    .unwrap();
    let out = c.run(&["check"], QUICK_TIMEOUT);
    assert_eq!(out.code(), 0, "{}", out.tail(2000));
    assert!(
        out.stdout
            .contains(&format!("ok: {} suite files", suiteset::SUITES.len())),
        "the planted suite is not run\n{}",
        out.tail(2000)
    );
    assert!(
        suites.join("planted.yaml").exists(),
        "another's file is never removed"
    );
    let beside = c.cache().with_file_name(format!("{}-1", suiteset::ID));
    assert_eq!(
        std::fs::read_to_string(beside.join("suites").join("etag.yaml")).unwrap(),
        etag
    );
    assert!(!beside.join("suites").join("planted.yaml").exists());
}

/// A suite of its own that checks bodies against a schema of its own.
const EXTRA_SUITE: &str = "suite: extra\nscenarios:\n  - name: get-missing\n    for_each_type: [any]\n    steps:\n      - fresh: {as: r}\n      - request: {method: GET, url: \"${r.url}\"}\n        expect:\n          - {schema: my-error.json, when_status: 4xx, rule: ERR-01}\n";
const EXTRA_SCHEMA: &str = r#"{"type": "object", "required": ["error"]}"#;

#[test]
fn suites_and_schemas_are_replaced_or_added_to() {
    let c = Clean::new("install-add");
    let extra = c.dir.join("extra");
    let extra_schemas = c.dir.join("extra-schemas");
    c.dir.write("extra/extra.yaml", EXTRA_SUITE);
    c.dir.write("extra-schemas/my-error.json", EXTRA_SCHEMA);
    let (e, s) = (
        extra.display().to_string(),
        extra_schemas.display().to_string(),
    );
    let n = suiteset::SUITES.len();

    // Added: the built-in suites and the extra one, with its schema beside the built-in ones.
    let plus_e = format!("+{e}");
    let plus_s = format!("+{s}");
    let out = c.run(
        &["check", "--suites", &plus_e, "--schemas", &plus_s],
        QUICK_TIMEOUT,
    );
    assert_eq!(out.code(), 0, "{}", out.tail(2000));
    assert!(
        out.stdout.contains(&format!("ok: {} suite files", n + 1)),
        "{}",
        out.tail(2000)
    );

    // Without its schema: a positioned error naming the real file.
    let out = c.run(&["check", "--suites", &plus_e], QUICK_TIMEOUT);
    assert_eq!(out.code(), 2, "{}", out.tail(2000));
    assert!(
        out.stderr.contains("unknown schema file `my-error.json`"),
        "{}",
        out.tail(2000)
    );
    assert!(out.stderr.contains("extra.yaml:9:"), "{}", out.tail(2000));

    // Replaced: the extra suite alone (the built-in schemas stay the default base).
    let out = c.run(
        &["check", "--suites", &e, "--schemas", &plus_s],
        QUICK_TIMEOUT,
    );
    assert_eq!(out.code(), 0, "{}", out.tail(2000));
    assert!(
        out.stdout.contains("ok: 1 suite files"),
        "{}",
        out.tail(2000)
    );
    let out = c.run(
        &[
            "run",
            "--target",
            "embedded",
            "--suites",
            &e,
            "--schemas",
            &plus_s,
            "--list",
        ],
        QUICK_TIMEOUT,
    );
    assert_eq!(out.code(), 0, "{}", out.tail(2000));
    let tests: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.ends_with(": test"))
        .collect();
    assert!(!tests.is_empty(), "{}", out.tail(2000));
    assert!(tests.iter().all(|l| l.starts_with("extra::")), "{tests:?}");

    // A replacing --schemas folder that lacks the built-in schemas fails the built-in suites.
    let out = c.run(&["check", "--schemas", &s], QUICK_TIMEOUT);
    assert_eq!(out.code(), 2, "{}", out.tail(2000));
    assert!(
        out.stderr.contains("unknown schema file"),
        "{}",
        out.tail(2000)
    );

    // The README's `run suites ...` names the default set outside a checkout too.
    let out = c.run(
        &["run", "suites", "--target", "embedded", "--list"],
        QUICK_TIMEOUT,
    );
    assert_eq!(out.code(), 0, "{}", out.tail(2000));
    assert!(out.stdout.contains("etag::"), "{}", out.tail(2000));

    // Mistakes are usage errors.
    let out = c.run(&["check", "--schemas", "+/no/such/dir"], QUICK_TIMEOUT);
    assert_eq!(out.code(), 2);
    assert!(
        out.stderr
            .contains("--schemas /no/such/dir: no such folder"),
        "{}",
        out.tail(2000)
    );
    let out = c.run(&["check", "--suites", "/no/such/suites"], QUICK_TIMEOUT);
    assert_eq!(out.code(), 2);
    assert!(
        out.stderr
            .contains("/no/such/suites: no such file or directory"),
        "{}",
        out.tail(2000)
    );
}
