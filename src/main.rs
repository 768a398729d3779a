//! vmscale's entry point: parse arguments, call one command, map its error
//! to an exit code (2 bad input or refused, 1 failed, 130 interrupted).

use clap::Parser;
use std::os::unix::ffi::OsStrExt;
use vmscale::cli::{Cli, Command};
use vmscale::commands::{self, Error};

fn main() {
    hide_password();
    // Still one thread: no child vmscale starts inherits the password.
    vmscale::store::keep_password_from_children();
    vmscale::pipe::run(real_main);
}

/// A PostgreSQL URL with a password on the command line would show in
/// every process listing (and the stored command line): vmscale runs
/// itself again at once with the password moved to PGPASSWORD.
fn hide_password() {
    use std::os::unix::process::CommandExt;
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let Some((hidden, secret)) = vmscale::store::hide_password(&args) else {
        return;
    };
    let Ok(mut again) = vmscale::exec::again::command(&hidden) else {
        return;
    };
    again.env("PGPASSWORD", std::ffi::OsStr::from_bytes(&secret));
    // exec returns only when it failed: go on with the arguments as given.
    let _ = again.exec();
}

fn real_main() {
    let cli = Cli::parse();
    commands::output::configure(cli.output.clone(), cli.quiet);
    let db = cli.db.clone().unwrap_or_else(vmscale::store::default_path);
    let reads_machine = matches!(
        cli.command,
        Command::Run(_)
            | Command::Sysinfo(_)
            | Command::Pcp(_)
            | Command::Doctor(_)
            | Command::Reproduce(_)
    );
    let checked = match reads_machine {
        true => vmscale::machine::check_root(),
        false => Ok(()),
    };
    if let Err(e) = checked.and_then(|()| dispatch(cli.command, &db)) {
        eprintln!("vmscale: {e}");
        std::process::exit(exit_code(&e));
    }
}

/// Runs one command against the store at `db`.
fn dispatch(command: Command, db: &std::path::Path) -> Result<(), Error> {
    if !matches!(command, Command::Restore(_)) {
        commands::restore::at_start();
    }
    let db = db.to_path_buf();
    match command {
        Command::Run(a) if a.name == vmscale::cli::QUICK => {
            commands::quick::run(&db, &a.harness, &vmscale::machine::live())
        }
        Command::Run(a) => commands::run::run(&db, a.0),
        Command::Show(a) if a.plot => commands::plot::plot(&db, &a.run, a.figure.as_deref()),
        Command::Show(a) => commands::show::show_as(&db, &a.run, a.output.format()),
        Command::Compare(a) => commands::compare::compare(&db, &a),
        Command::List(a) => commands::list::list(&db, &a),
        Command::Sysinfo(a) => commands::sysinfo::sysinfo(&a.machine.root, a.json.json),
        Command::Restore(a) => {
            let restored = commands::restore::restore(a.no_wait);
            // Runs killed with their knobs are marked incomplete too.
            if let Err(e) = vmscale::store::mark_gone_at(&db) {
                eprintln!("vmscale: {e}");
            }
            restored
        }
        Command::Report(a) => commands::report::report(&db, &a),
        Command::Fit(a) => commands::fit::fit(&db, &a),
        Command::Import(a) => commands::import::import(&db, &a),
        Command::Pcp(a) => commands::pcp::pcp(&a.machine.root, a.json.json, a.per_cpu),
        Command::Doctor(a) => commands::doctor::doctor(&a),
        Command::Delete(a) => commands::manage::delete(&db, &a.runs),
        Command::Rename(a) => commands::manage::rename(&db, &a.run, &a.label),
        Command::Completions(a) => commands::completions::completions(a.shell),
        Command::Man(_) => commands::completions::man(),
        Command::Merge(a) => commands::merge::merge(&db, &a.files, a.json.json),
        Command::Guest(a) => commands::guest::guest(&db, &a),
        Command::History(a) => commands::history::history(&db, &a),
        Command::Bisect(a) => commands::bisect::bisect(&db, &a),
        Command::Reproduce(a) => commands::reproduce::reproduce(&db, &a),
        Command::Cache(a) => commands::cache::cache(&a),
    }
}

/// The one place an error becomes an exit code.
fn exit_code(e: &Error) -> i32 {
    match e {
        Error::Input(_) | Error::Refused(_) => 2,
        Error::Io { .. } | Error::Store(_) | Error::Failed(_) => 1,
        Error::Interrupted => 130,
        Error::Exit(code, _) => *code,
    }
}
