//! The CI pipelines in docs/ci are YAML that parses, hold the shape their README promises (a
//! partitioned certification, a merge of every shard, the JUnit and the summary published,
//! federated sign-in), and every `rpconform` command in them is accepted by the real command
//! line (flags that exist, partitions that parse).

use std::path::PathBuf;

use clap::Parser;
use serde_yaml::Value;

fn doc(name: &str) -> (String, Value) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("docs")
        .join("ci")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let value: Value = serde_yaml::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not valid YAML: {e}", path.display()));
    (text, value)
}

/// Every string under `v` (scripts, inputs...).
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Sequence(s) => s.iter().for_each(|x| strings(x, out)),
        Value::Mapping(m) => m.iter().for_each(|(k, x)| {
            strings(k, out);
            strings(x, out);
        }),
        Value::Tagged(t) => strings(&t.value, out),
        _ => {}
    }
}

/// The `rpconform ...` commands in the scripts: continuation lines joined, pipeline
/// expressions replaced by sample values, words split as the shell would (double quotes).
fn commands(v: &Value) -> Vec<Vec<String>> {
    let mut texts = Vec::new();
    strings(v, &mut texts);
    let mut out = Vec::new();
    for t in texts {
        let joined = t.replace("\\\n", " ");
        for line in joined.lines() {
            let line = line.trim();
            let Some(rest) = line.strip_prefix("rpconform ") else {
                continue;
            };
            let rest = rest
                .replace("${{ matrix.shard }}", "2")
                .replace("$(System.JobPositionInPhase)", "2")
                .replace("$(System.TotalJobsInPhase)", "3");
            let mut words = vec!["rpconform".to_string()];
            let mut cur = String::new();
            let mut quoted = false;
            for c in rest.chars() {
                match c {
                    '"' => quoted = !quoted,
                    c if c.is_whitespace() && !quoted => {
                        if !cur.is_empty() {
                            words.push(std::mem::take(&mut cur));
                        }
                    }
                    c => cur.push(c),
                }
            }
            if !cur.is_empty() {
                words.push(cur);
            }
            out.push(words);
        }
    }
    out
}

fn assert_commands_parse(name: &str, v: &Value) -> Vec<Vec<String>> {
    let cmds = commands(v);
    assert!(!cmds.is_empty(), "{name}: no rpconform command found");
    for c in &cmds {
        if let Err(e) = rpconform::cli::Cli::try_parse_from(c) {
            panic!(
                "{name}: `{}` is refused by the command line:\n{e}",
                c.join(" ")
            );
        }
    }
    cmds
}

/// The partition of the run command, and the folders the merge names.
fn partition_and_merge(cmds: &[Vec<String>]) -> (String, usize) {
    let run = cmds
        .iter()
        .find(|c| c.get(1).map(String::as_str) == Some("run"))
        .expect("a run command");
    let i = run
        .iter()
        .position(|w| w == "--partition")
        .expect("--partition");
    let merge = cmds
        .iter()
        .find(|c| c.get(1..3) == Some(&["report".to_string(), "merge".to_string()][..]))
        .expect("a report merge command");
    let folders = merge[3..]
        .iter()
        .skip_while(|w| w.starts_with("--"))
        .take_while(|w| !w.starts_with("--"))
        .count();
    // What a board signs: every shard certifies its part and names the RP build, and the
    // merge gives the one verdict.
    assert!(run.iter().any(|w| w == "--certify"), "{run:?}");
    assert!(run.iter().any(|w| w == "--subject"), "{run:?}");
    assert!(merge.iter().any(|w| w == "--certify"), "{merge:?}");
    (run[i + 1].clone(), folders)
}

#[test]
fn the_github_actions_workflow_parses_and_runs_a_partitioned_certification() {
    let (text, v) = doc("github-actions.yml");
    assert_eq!(v["permissions"]["id-token"], Value::from("write"));
    let shards = v["jobs"]["certify"]["strategy"]["matrix"]["shard"]
        .as_sequence()
        .expect("a shard matrix")
        .len();
    assert!(shards > 1);
    let report = &v["jobs"]["report"];
    assert_eq!(report["needs"], Value::from("certify"));
    assert_eq!(report["if"], Value::from("always()"));
    let cmds = assert_commands_parse("github-actions.yml", &v);
    let (partition, folders) = partition_and_merge(&cmds);
    assert_eq!(partition, format!("count:2/{shards}"));
    assert_eq!(folders, shards, "the merge names every shard");
    for needle in [
        "azure/login@",
        "$GITHUB_STEP_SUMMARY",
        "reports/summary.md",
        "reports/junit.xml",
        "rpconform doctor",
        "cargo install --locked --git",
    ] {
        assert!(text.contains(needle), "github-actions.yml lacks `{needle}`");
    }
}

#[test]
fn the_azure_pipeline_parses_and_runs_a_partitioned_certification() {
    let (text, v) = doc("azure-pipelines.yml");
    let stages = v["stages"].as_sequence().expect("stages");
    let certify = &stages[0]["jobs"][0];
    let parallel = certify["strategy"]["parallel"].as_u64().expect("parallel") as usize;
    assert!(parallel > 1);
    let tasks: Vec<String> = stages
        .iter()
        .flat_map(|s| s["jobs"].as_sequence().cloned().unwrap_or_default())
        .flat_map(|j| j["steps"].as_sequence().cloned().unwrap_or_default())
        .filter_map(|s| s["task"].as_str().map(str::to_string))
        .collect();
    for t in [
        "AzureCLI@2",
        "PublishTestResults@2",
        "PublishPipelineArtifact@1",
    ] {
        assert!(tasks.iter().any(|x| x == t), "no {t} task: {tasks:?}");
    }
    let cmds = assert_commands_parse("azure-pipelines.yml", &v);
    let (partition, folders) = partition_and_merge(&cmds);
    assert_eq!(partition, "count:2/3");
    assert_eq!(folders, parallel, "the merge names every shard");
    for needle in [
        "task.uploadsummary",
        "summary.md",
        "junit.xml",
        "rpconform doctor",
    ] {
        assert!(
            text.contains(needle),
            "azure-pipelines.yml lacks `{needle}`"
        );
    }
}

/// How many files in `dir` end with one of `exts`.
fn count_files(dir: &str, exts: &[&str]) -> usize {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(dir);
    std::fs::read_dir(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .filter_map(Result::ok)
        .filter(|e| e.path().is_file())
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            exts.iter().any(|x| name.ends_with(x))
        })
        .count()
}

/// The README says how many suites (and schemas) the built-in set holds: the numbers it gives
/// are the files in `suites/*.yaml` and `schemas/*.json`, and it never claims a default
/// `--test-threads` cap (there is none: every test starts, longest first).
#[test]
fn the_readme_counts_the_suites_and_schemas_there_are() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let readme = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
    let suites = count_files("suites", &[".yaml", ".yml"]);
    let schemas = count_files("schemas", &[".json"]);
    for (word, n) in [("suites", suites), ("schemas", schemas)] {
        let re = regex::Regex::new(&format!(r"\b(\d+) {word}\b")).unwrap();
        let claims: Vec<usize> = re
            .captures_iter(&readme)
            .map(|c| c[1].parse().unwrap())
            .collect();
        assert!(
            !claims.is_empty(),
            "README.md never says how many {word} there are"
        );
        for c in claims {
            assert_eq!(
                c, n,
                "README.md says {c} {word}; the repository has {n} ({word}/)"
            );
        }
    }
    let threads = regex::Regex::new(r"\d+ by\s+default, `--test-threads`").unwrap();
    assert!(
        !threads.is_match(&readme),
        "README.md gives --test-threads a default; it has none"
    );
}

fn root_doc(path: &str) -> (String, Value) {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let value: Value = serde_yaml::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not valid YAML: {e}", p.display()));
    (text, value)
}

/// The script both reusable pieces call exists, is executable and is valid bash.
fn the_ci_script() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("ci/rpconform-ci.sh");
    let meta = std::fs::metadata(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    use std::os::unix::fs::PermissionsExt;
    assert!(
        meta.permissions().mode() & 0o111 != 0,
        "ci/rpconform-ci.sh is not executable"
    );
    let syntax = std::process::Command::new("bash")
        .arg("-n")
        .arg(&p)
        .output()
        .expect("bash runs");
    assert!(
        syntax.status.success(),
        "ci/rpconform-ci.sh: {}",
        String::from_utf8_lossy(&syntax.stderr)
    );
    p
}

/// action.yml: a composite action with the inputs a team sets (target, options, certification
/// and subject, a pinned version), that installs rpconform, runs it through the one script,
/// uploads the SARIF to code scanning and keeps the reports, whatever the run's verdict.
#[test]
fn the_github_action_installs_a_pinned_rpconform_and_publishes_what_the_script_writes() {
    the_ci_script();
    let (text, v) = root_doc("action.yml");
    assert_eq!(v["runs"]["using"], Value::from("composite"));
    for input in [
        "target",
        "args",
        "certify",
        "subject",
        "version",
        "ref",
        "report-dir",
        "upload-sarif",
    ] {
        assert!(
            v["inputs"][input]["description"].is_string(),
            "action.yml has no described input `{input}`"
        );
    }
    assert_eq!(v["inputs"]["target"]["required"], Value::from(true));
    for output in ["status", "exit-code", "junit", "sarif"] {
        assert!(
            v["outputs"][output]["value"].is_string(),
            "no output `{output}`"
        );
    }
    let steps = v["runs"]["steps"].as_sequence().expect("steps");
    let uses: Vec<&str> = steps.iter().filter_map(|s| s["uses"].as_str()).collect();
    assert!(
        uses.iter()
            .any(|u| u.starts_with("github/codeql-action/upload-sarif@")),
        "{uses:?}"
    );
    assert!(
        uses.iter()
            .any(|u| u.starts_with("actions/upload-artifact@")),
        "{uses:?}"
    );
    for s in steps.iter().filter(|s| s["uses"].is_string()) {
        let cond = s["if"].as_str().unwrap_or("");
        assert!(
            cond.starts_with("always()"),
            "{:?} runs only when the run passed",
            s["uses"]
        );
    }
    for needle in [
        "cargo install --locked --git",
        "--rev \"$REF\"",
        "--tag",
        "ci/rpconform-ci.sh",
        "--certify",
        "--subject",
        "results.sarif",
    ] {
        assert!(text.contains(needle), "action.yml lacks `{needle}`");
    }
}

/// The Azure Pipelines template: parameters for the target, options, certification and
/// subject; rpconform pinned by a repository resource; the one script run (inside AzureCLI@2
/// when a service connection is named); JUnit and the reports published whatever the verdict.
#[test]
fn the_azure_pipelines_template_runs_the_script_and_publishes_its_reports() {
    the_ci_script();
    let (text, v) = doc("rpconform-steps.yml");
    let params: Vec<&str> = v["parameters"]
        .as_sequence()
        .expect("parameters")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    for p in [
        "target",
        "args",
        "certify",
        "subject",
        "azureSubscription",
        "reportDir",
    ] {
        assert!(params.contains(&p), "no parameter `{p}`: {params:?}");
    }
    let steps = v["steps"].as_sequence().expect("steps");
    assert_eq!(steps[0]["checkout"], Value::from("rpconform"));
    let mut tasks = Vec::new();
    strings(&v, &mut tasks);
    for t in [
        "AzureCLI@2",
        "PublishTestResults@2",
        "PublishPipelineArtifact@1",
    ] {
        assert!(tasks.iter().any(|x| x == t), "no {t} task");
    }
    for s in steps.iter().filter(|s| s["task"].is_string()) {
        assert_eq!(
            s["condition"],
            Value::from("succeededOrFailed()"),
            "{:?}",
            s["task"]
        );
    }
    for needle in [
        "cargo install --locked --path",
        "rpconform-src/ci/rpconform-ci.sh",
        "opts+=(--certify)",
        "opts+=(--subject",
        "junit.xml",
    ] {
        assert!(
            text.contains(needle),
            "rpconform-steps.yml lacks `{needle}`"
        );
    }
}

/// The docs point at both reusable pieces and the script.
#[test]
fn the_ci_readme_names_the_action_the_template_and_the_script() {
    let (text, _) = (
        std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/ci/README.md"),
        )
        .unwrap(),
        (),
    );
    for needle in [
        "action.yml",
        "rpconform-steps.yml",
        "ci/rpconform-ci.sh",
        "tests/ci_script.rs",
    ] {
        assert!(
            text.contains(needle),
            "docs/ci/README.md does not name {needle}"
        );
    }
}
