//! `vmscale completions SHELL` and `vmscale man`: the shell completion
//! script (clap_complete) and the roff man page (clap_mangen), both made
//! from the same clap definitions as `--help`, so they never drift.

use clap::CommandFactory;

use super::{Error, Result};
use crate::cli::Cli;

/// The completion script for `shell`, on stdout (or `-o FILE`).
pub fn completions(shell: clap_complete::Shell) -> Result<()> {
    crate::deferred::eager();
    let mut cmd = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "vmscale", &mut script);
    super::output::data(&String::from_utf8_lossy(&script))
}

/// The man page vmscale(1): every command with its options, on stdout.
pub fn man() -> Result<()> {
    crate::deferred::eager();
    let cmd = Cli::command();
    let mut page = Vec::new();
    let man = clap_mangen::Man::new(cmd.clone());
    man.render(&mut page)
        .map_err(|e| Error::Failed(format!("man page: {e}")))?;
    // The subcommands' own options, as SUBCOMMAND sections of one page.
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        render_section(sub, &format!("vmscale {}", sub.get_name()), &mut page)?;
    }
    super::output::data(&String::from_utf8_lossy(&page))
}

fn render_section(sub: &clap::Command, path: &str, page: &mut Vec<u8>) -> Result<()> {
    let named = sub.clone().bin_name(path.to_string());
    let man = clap_mangen::Man::new(named);
    let mut body = Vec::new();
    man.render_synopsis_section(&mut body)
        .and_then(|_| man.render_description_section(&mut body))
        .and_then(|_| man.render_options_section(&mut body))
        .and_then(|_| man.render_extra_section(&mut body))
        .map_err(|e| Error::Failed(format!("man page: {e}")))?;
    // One page: each command's sections become subsections under a
    // heading naming the command.
    let text = String::from_utf8_lossy(&body);
    page.extend_from_slice(format!(".SH \"{}\"\n", path.to_uppercase()).as_bytes());
    for line in text.lines() {
        let line = line.replace(".SH ", ".SS ");
        page.extend_from_slice(line.as_bytes());
        page.push(b'\n');
    }
    for s in sub.get_subcommands().filter(|s| s.get_name() != "help") {
        render_section(s, &format!("{path} {}", s.get_name()), page)?;
    }
    Ok(())
}
