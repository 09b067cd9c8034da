//! The command tree as a user meets it: every option of every command says what it is (its
//! own words, not a neighbour's), and no option that takes several values can swallow the
//! positional arguments after it.

use clap::{Arg, ArgAction, Command, CommandFactory, Parser};

use super::{Cli, Command as Sub};

/// Every command of the tree, with its path (`rpconform report merge`).
fn commands() -> Vec<(String, Command)> {
    fn walk(path: String, cmd: &Command, out: &mut Vec<(String, Command)>) {
        for sub in cmd.get_subcommands() {
            walk(format!("{path} {}", sub.get_name()), sub, out);
        }
        out.push((path, cmd.clone()));
    }
    let mut root = Cli::command();
    root.build();
    let mut out = Vec::new();
    walk("rpconform".into(), &root, &mut out);
    out
}

/// The options a user writes (clap's own --help and --version aside).
fn user_args(cmd: &Command) -> impl Iterator<Item = &Arg> {
    cmd.get_arguments().filter(|a| {
        !matches!(a.get_action(), ArgAction::Help | ArgAction::Version)
            && !matches!(a.get_id().as_str(), "help" | "version")
    })
}

fn help_of(arg: &Arg) -> String {
    arg.get_help()
        .or(arg.get_long_help())
        .map(|h| h.to_string())
        .unwrap_or_default()
}

#[test]
fn every_argument_of_every_command_has_its_own_help() {
    let mut problems = Vec::new();
    for (path, cmd) in commands() {
        let mut seen: Vec<(String, String)> = Vec::new();
        for arg in user_args(&cmd) {
            let name = arg.get_id().to_string();
            let help = help_of(arg);
            if help.trim().is_empty() {
                problems.push(format!("{path}: `{name}` has no help"));
                continue;
            }
            if let Some((other, _)) = seen.iter().find(|(_, h)| *h == help) {
                problems.push(format!(
                    "{path}: `{name}` has the help of `{other}`: {help}"
                ));
            }
            seen.push((name, help));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// An option that takes values up to the next flag would take the positional arguments
/// written after it as its own (`probe --openapi spec.json GET URL`).
#[test]
fn no_option_of_a_command_with_positionals_takes_several_values_at_once() {
    let mut problems = Vec::new();
    for (path, cmd) in commands() {
        if !cmd.get_positionals().any(|_| true) {
            continue;
        }
        for arg in user_args(&cmd).filter(|a| !a.is_positional()) {
            let greedy = arg
                .get_num_args()
                .is_some_and(|n| n.max_values() > 1 && !arg.is_require_equals_set());
            if greedy {
                problems.push(format!("{path}: `{}` takes several values", arg.get_id()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn openapi_is_repeatable_and_leaves_the_positionals_alone() {
    let cli = Cli::try_parse_from([
        "rpconform",
        "probe",
        "--openapi",
        "a.json",
        "GET",
        "/subscriptions",
        "--openapi",
        "b.json",
    ])
    .expect("parses");
    let Sub::Probe(p) = cli.command else {
        panic!("not probe")
    };
    assert_eq!(
        (p.method.as_str(), p.url.as_str()),
        ("GET", "/subscriptions")
    );
    assert_eq!(p.openapi.len(), 2);
    let cli = Cli::try_parse_from(["rpconform", "replay", "--openapi", "s.json", "rec.har"])
        .expect("parses");
    let Sub::Replay(r) = cli.command else {
        panic!("not replay")
    };
    assert_eq!(r.paths, vec![std::path::PathBuf::from("rec.har")]);
    assert_eq!(r.openapi, vec![std::path::PathBuf::from("s.json")]);
}
