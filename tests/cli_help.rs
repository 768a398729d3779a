//! Every subcommand's `--help` ends with examples, and the examples name
//! only subcommands and options that exist.

use clap::{CommandFactory, Parser};
use vmscale::cli::Cli;

/// The whole command tree, built: each command's options and
/// subcommands are deferred until then.
fn tree() -> clap::Command {
    let mut root = Cli::command();
    root.build();
    root
}

fn walk(cmd: &clap::Command, path: &str, out: &mut Vec<(String, String)>) {
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = format!("{path} {}", sub.get_name());
        let help = sub
            .get_after_help()
            .map(|h| h.to_string())
            .unwrap_or_default();
        out.push((name.clone(), help));
        walk(sub, &name, out);
    }
}

#[test]
fn every_subcommand_has_examples() {
    let mut all = Vec::new();
    walk(&tree(), "vmscale", &mut all);
    assert!(all.len() > 20, "{all:?}");
    for (name, help) in &all {
        assert!(
            help.contains("Examples:\n"),
            "`{name} --help` has no examples"
        );
    }
}

#[test]
fn examples_parse() {
    let root = tree();
    let mut all = vec![(
        "vmscale".to_string(),
        root.get_after_help()
            .map(|h| h.to_string())
            .unwrap_or_default(),
    )];
    walk(&root, "vmscale", &mut all);
    let mut parsed = 0;
    for (name, help) in &all {
        for line in help
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("vmscale "))
        {
            // Drop the trailing description (two spaces or more) and redirections.
            let cmd = line.split("  ").next().unwrap_or(line);
            let cmd = cmd.split(" > ").next().unwrap_or(cmd);
            let words: Vec<String> = split_words(cmd);
            if let Err(e) = Cli::try_parse_from(&words) {
                panic!("example of `{name}` does not parse: {line}\n{e}");
            }
            parsed += 1;
        }
    }
    assert!(parsed > 50, "only {parsed} examples found");
}

/// Splits on blanks, keeping 'single-quoted' words whole.
fn split_words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '\'' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Every command's descriptions, built or not: each command's options are
/// deferred until it is invoked, and an `Args` struct's doc comment would
/// then replace the about of the command it is in.
#[test]
fn deferred_options_keep_each_command_s_description() {
    fn abouts(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            let name = format!("{path} {}", sub.get_name());
            let text = |t: Option<&clap::builder::StyledStr>| t.map(|t| t.to_string());
            out.push(format!(
                "{name}: {:?} {:?}",
                text(sub.get_about()),
                text(sub.get_long_about())
            ));
            abouts(sub, &name, out);
        }
    }
    let (mut before, mut after) = (Vec::new(), Vec::new());
    abouts(&Cli::command(), "vmscale", &mut before);
    abouts(&tree(), "vmscale", &mut after);
    assert!(before.len() > 15, "{before:?}");
    // Unbuilt, a deferred command has no subcommands yet: compare those
    // it has.
    for line in &before {
        assert!(after.contains(line), "changed once built: {line}");
    }
}
