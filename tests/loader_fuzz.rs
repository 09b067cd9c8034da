//! Loader robustness: a bounded, seeded random search over broken suite and target files.
//!
//! Valid inputs (every suite in suites/, the embedded reference RP's target file, a minimal
//! target) are mutated a few thousand times with fixed seeds: lines deleted, duplicated,
//! swapped, re-indented or truncated; random characters (control characters, NUL, tabs, CR,
//! non-ASCII) and runs of YAML punctuation inserted; deep nesting in flow, block and compact
//! (`- - - x`) form; huge and odd numbers; unknown keys; broken `${...}` templates; anchors,
//! aliases and tags. Each mutant goes straight to the library loaders
//! (`rpconform::scenario::parse_suite`, `rpconform::target::parse_target`) under
//! `catch_unwind`. Every mutant must load or be refused without a panic (or a stack overflow,
//! which would abort this test binary), and every refusal must carry at least one diagnostic,
//! each positioned at line >= 1 and column >= 1. A failing mutant is written to a temporary
//! file and named in the failure with its seed, so it can be replayed.
//!
//! No new dependency: the generator is a small xorshift64*.

use crate::common;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::Instant;

use rpconform::diag::Diagnostic;
use rpconform::scenario::{LoadOptions, parse_suite};
use rpconform::target::{embedded_target_yaml, parse_target};

/// xorshift64* (Vigna): tiny, fast, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

const PUNCTUATION: &[&str] = &[
    ":", ": ", "-", "- ", "[", "]", "{", "}", ",", "#", "&", "*", "!", "|", ">", "'", "\"", "%",
    "@", "`", "?", "? ", "---", "...", "\\", "<<: ", "!!str ", "|-", ">+",
];

const ODD_CHARS: &[char] = &[
    '\0',
    '\t',
    '\r',
    '\u{7}',
    '\u{1b}',
    '\u{85}',
    '\u{a0}',
    '\u{feff}',
    '\u{2028}',
    '\u{fffd}',
    'é',
    'ß',
    '中',
    '🦀',
    '\u{202e}',
    '\u{200b}',
    'ǅ',
    '\u{10ffff}',
];

const NUMBERS: &[&str] = &[
    "99999999999999999999999999999999",
    "-99999999999999999999",
    "18446744073709551616",
    "1e400",
    "-1e-400",
    ".inf",
    "-.inf",
    ".nan",
    "0x7fffffffffffffff",
    "0o777",
    "-0",
    "1_000_000",
    "4.",
    "00012",
    "+12",
    "9223372036854775808",
];

const TEMPLATES: &[&str] = &[
    "${",
    "${}",
    "${x",
    "${x.",
    "${.x}",
    "${type.}",
    "${a|}",
    "${a|nope}",
    "$${",
    "${${a}}",
    "${target.base_url|json|json}",
    "${row.",
    "}",
    "${unique.0.1.2}",
    "${r.url|dirname}",
];

fn random_char(rng: &mut Rng) -> char {
    match rng.below(4) {
        0 => *rng.pick(ODD_CHARS),
        1 => char::from_u32(rng.below(0x80) as u32).unwrap_or('x'),
        2 => char::from_u32(0x80 + rng.below(0x2000) as u32).unwrap_or('x'),
        _ => char::from_u32(rng.below(0x11_0000) as u32).unwrap_or('\u{fffd}'),
    }
}

/// A char boundary of `s` at or before `at`.
fn boundary(s: &str, mut at: usize) -> usize {
    at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn insert_at_random(rng: &mut Rng, line: &mut String, what: &str) {
    let at = boundary(line, rng.below(line.len() + 1));
    line.insert_str(at, what);
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// One random mutation of `lines`.
fn mutate(rng: &mut Rng, lines: &mut Vec<String>) {
    if lines.is_empty() {
        lines.push(String::new());
    }
    let n = lines.len();
    let i = rng.below(n);
    match rng.below(16) {
        0 => {
            lines.remove(i);
        }
        1 => {
            let l = lines[i].clone();
            lines.insert(i, l);
        }
        2 => lines.swap(i, rng.below(n)),
        3 => {
            let k = 1 + rng.below(8);
            let s: String = (0..k).map(|_| random_char(rng)).collect();
            insert_at_random(rng, &mut lines[i], &s);
        }
        4 => {
            let k = 1 + rng.below(4);
            let s: String = (0..k).map(|_| *rng.pick(PUNCTUATION)).collect();
            insert_at_random(rng, &mut lines[i], &s);
        }
        5 => {
            // Deep nesting: flow, block (indentation), or compact on one line.
            let depth = *rng.pick(&[10, 150, 199, 201, 260, 400, 1000, 5000, 50_000]);
            let nested = match rng.below(5) {
                0 => format!("{}{}", "[".repeat(depth), "]".repeat(depth)),
                1 => format!("{}x{}", "{a: ".repeat(depth), "}".repeat(depth)),
                2 => format!("{}x", "- ".repeat(depth)),
                3 => format!("{}x", "? - ".repeat(depth)),
                _ => "[".repeat(depth),
            };
            if rng.chance(30) {
                // On a line of its own, where compact block nesting is valid YAML.
                let indent = indent_of(&lines[i]);
                lines.insert(i, format!("{}{nested}", " ".repeat(indent)));
            } else {
                let l = &mut lines[i];
                match l.find(": ") {
                    Some(p) => l.replace_range(p + 2.., &nested),
                    None => l.push_str(&nested),
                }
            }
            if rng.chance(30) {
                // And a staircase of indentation below it.
                let base = indent_of(&lines[i]);
                let steps = *rng.pick(&[50, 250, 500, 2000]);
                for d in 0..steps {
                    lines.insert(i + 1 + d, format!("{}k{d}:", " ".repeat(base + 1 + d)));
                }
            }
        }
        6 => {
            let num = *rng.pick(NUMBERS);
            let l = &mut lines[i];
            match l.find(": ") {
                Some(p) => l.replace_range(p + 2.., num),
                None => l.push_str(num),
            }
        }
        7 => {
            let indent = indent_of(&lines[rng.below(n)]);
            let key = *rng.pick(&[
                "zzz_unknown: 1",
                "stauts: 200",
                "rule: NOPE-99",
                "for_each_type: [nonsense]",
                "kind: weird",
                "create_bdy: {}",
                "- {}",
                "- name: x",
            ]);
            lines.insert(i, format!("{}{key}", " ".repeat(indent)));
        }
        8 => {
            // Truncate the file at a random point.
            let text = lines.join("\n");
            let cut = boundary(&text, rng.below(text.len() + 1));
            *lines = text[..cut].split('\n').map(str::to_string).collect();
        }
        9 => {
            let l = &mut lines[i];
            if !l.is_empty() {
                let at = boundary(l, rng.below(l.len()));
                let end = boundary(l, at + 1 + rng.below(3)).max(at);
                let c = random_char(rng).to_string();
                l.replace_range(at..end, &c);
            }
        }
        10 => {
            let l = &mut lines[i];
            if rng.chance(50) {
                let k = 1 + rng.below(3);
                l.insert_str(0, &" ".repeat(k));
            } else {
                let k = indent_of(l).min(1 + rng.below(3));
                l.replace_range(..k, "");
            }
        }
        11 => {
            let t = *rng.pick(TEMPLATES);
            insert_at_random(rng, &mut lines[i], t);
        }
        12 => {
            let t = *rng.pick(&["&a ", "*a", "<<: *a", "!tag ", "!!binary ", "&anchor", "*"]);
            insert_at_random(rng, &mut lines[i], t);
        }
        13 => {
            let l = &mut lines[i];
            let k = indent_of(l);
            l.replace_range(..k, &"\t".repeat(k.div_ceil(2)));
        }
        14 => {
            // A line joined with the next, or split in two.
            if rng.chance(50) && i + 1 < n {
                let next = lines.remove(i + 1);
                lines[i].push_str(&next);
            } else {
                let l = lines[i].clone();
                let at = boundary(&l, rng.below(l.len() + 1));
                lines[i] = l[..at].to_string();
                lines.insert(i + 1, l[at..].to_string());
            }
        }
        _ => {
            // Something very long.
            let k = *rng.pick(&[1_000, 100_000]);
            let s = rng.pick(&["x", "${", "\\u", "é", "'"]).repeat(k);
            insert_at_random(rng, &mut lines[i], &s);
        }
    }
}

/// One problem found: what was loaded, with which seed, and what went wrong.
struct Finding {
    what: String,
    seed: u64,
    problem: String,
    saved: PathBuf,
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(a non-string panic)".into())
}

/// Check a loader's verdict on one mutant: a panic, an empty refusal, or a diagnostic
/// without a position is a finding.
fn judge(result: std::thread::Result<Result<(), Vec<Diagnostic>>>) -> Option<String> {
    match result {
        Err(p) => Some(format!("panicked: {}", panic_message(&*p))),
        Ok(Ok(())) => None,
        Ok(Err(diags)) if diags.is_empty() => Some("refused with no diagnostic".into()),
        Ok(Err(diags)) => diags
            .iter()
            .find(|d| d.pos.line < 1 || d.pos.col < 1)
            .map(|d| {
                format!(
                    "diagnostic at line {} col {}: {}",
                    d.pos.line, d.pos.col, d.message
                )
            }),
    }
}

/// A loader under test: a file's path and text to a verdict.
type Loader<'a> = dyn Fn(&Path, &str) -> Result<(), Vec<Diagnostic>> + 'a;

/// Mutate every input `cases` times in all (seeded), run `load`, collect findings.
fn fuzz(
    label: &str,
    inputs: &[(String, String)],
    cases: usize,
    base_seed: u64,
    load: &Loader<'_>,
) -> (Vec<Finding>, usize) {
    let out_dir =
        std::env::temp_dir().join(format!("rpconform-fuzz-{label}-{}", std::process::id()));
    let mut findings = Vec::new();
    let mut refused = 0;
    for case in 0..cases {
        let seed = base_seed + case as u64;
        let mut rng = Rng::new(seed);
        let (name, text) = &inputs[case % inputs.len()];
        let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
        for _ in 0..1 + rng.below(3) {
            mutate(&mut rng, &mut lines);
        }
        let mutant = lines.join("\n");
        let path = PathBuf::from(format!("{name}.mutant-{seed}.yaml"));
        let result = catch_unwind(AssertUnwindSafe(|| load(&path, &mutant)));
        if matches!(result, Ok(Err(_))) {
            refused += 1;
        }
        if let Some(problem) = judge(result) {
            let _ = std::fs::create_dir_all(&out_dir);
            let saved = out_dir.join(format!("{name}-{seed}.yaml"));
            let _ = std::fs::write(&saved, &mutant);
            findings.push(Finding {
                what: name.clone(),
                seed,
                problem,
                saved,
            });
        }
    }
    (findings, refused)
}

fn assert_no_findings(label: &str, findings: &[Finding], cases: usize, refused: usize) {
    let listed: Vec<String> = findings
        .iter()
        .take(10)
        .map(|f| {
            format!(
                "- {} (seed {}): {}\n  mutant saved to {}",
                f.what,
                f.seed,
                f.problem,
                f.saved.display()
            )
        })
        .collect();
    assert!(
        findings.is_empty(),
        "{} of {cases} mutated {label} files broke the loader:\n{}",
        findings.len(),
        listed.join("\n")
    );
    // The mutations must actually break things most of the time, or this proves little.
    assert!(
        refused * 2 > cases,
        "only {refused} of {cases} mutants were refused: the mutations are too mild"
    );
}

fn suite_inputs() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(common::suites_dir())
        .expect("suites/ is readable")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).expect("a readable suite"),
            )
        })
        .collect();
    out.sort();
    assert!(
        out.len() >= 3,
        "too few suites to start from: {}",
        out.len()
    );
    out
}

#[test]
fn mutated_suites_never_panic_and_every_error_is_positioned() {
    let started = Instant::now();
    let inputs = suite_inputs();
    let opts = LoadOptions {
        schema_dir: common::schemas_dir(),
    };
    // The starting points load cleanly: the mutations are what breaks them.
    for (name, text) in &inputs {
        if let Err(d) = parse_suite(Path::new(name), text, &opts) {
            panic!(
                "{name} does not load before mutation: {:?}",
                d.first().map(|x| &x.message)
            );
        }
    }
    let cases = 2500;
    let (findings, refused) = fuzz(
        "suite",
        &inputs,
        cases,
        0x5EED_0000,
        &|path: &Path, text: &str| parse_suite(path, text, &opts).map(|_| ()),
    );
    eprintln!(
        "{cases} mutated suites in {:.1} s: {refused} refused, {} findings",
        started.elapsed().as_secs_f64(),
        findings.len()
    );
    assert_no_findings("suite", &findings, cases, refused);
}

const MINIMAL_TARGET: &str = "base_url: http://127.0.0.1:1
auth: {bearer_env: RP_TOKEN}
secret_headers: [x-api-key]
headers: {x-api-key: abcdef}
subscription: 00000000-0000-0000-0000-000000000000
resource_group: {name: rg, disposable: true}
namespace: Microsoft.Hostile
api_version: \"2024-01-01\"
location: eastus
deadline: 30
identity: {tenant: t, client: c}
types:
  things:
    kind: tracked
    async: true
    etag: true
    create_body: {location: eastus, properties: {size: 3}}
    update_body: {tags: {env: patched}}
    actions: [{name: restart, long_running: true, body: {}, result: {status: 200}}]
  parts: {parent: things, kind: proxy, create_body: {properties: {size: 1}}}
";

#[test]
fn mutated_targets_never_panic_and_every_error_is_positioned() {
    let started = Instant::now();
    let inputs = vec![
        (
            "embedded-target".to_string(),
            embedded_target_yaml("http://127.0.0.1:1"),
        ),
        ("minimal-target".to_string(), MINIMAL_TARGET.to_string()),
    ];
    for (name, text) in &inputs {
        if let Err(r) = parse_target(Path::new(name), text, name) {
            panic!("{name} does not load before mutation:\n{}", r.render());
        }
    }
    let cases = 2000;
    let (findings, refused) = fuzz(
        "target",
        &inputs,
        cases,
        0x7A26_0000,
        &|path: &Path, text: &str| {
            parse_target(path, text, "fuzz")
                .map(|_| ())
                .map_err(|r| r.diagnostics)
        },
    );
    eprintln!(
        "{cases} mutated targets in {:.1} s: {refused} refused, {} findings",
        started.elapsed().as_secs_f64(),
        findings.len()
    );
    assert_no_findings("target", &findings, cases, refused);
}

#[test]
fn the_generator_is_deterministic() {
    let run = |seed| {
        let mut r = Rng::new(seed);
        let mut lines: Vec<String> = MINIMAL_TARGET.lines().map(str::to_string).collect();
        for _ in 0..5 {
            mutate(&mut r, &mut lines);
        }
        lines.join("\n")
    };
    assert_eq!(run(42), run(42));
    assert_ne!(run(42), run(43));
}
