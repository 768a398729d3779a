//! vmscale's entry point: parse arguments, call one command, map its error
//! to an exit code (2 bad input, 1 failed run, 130 interrupted).

use clap::Parser;
use vmscale::cli::{Cli, Command};
use vmscale::commands::{self, Error};

fn main() {
    let cli = Cli::parse();
    let db = cli.db.clone().unwrap_or_else(vmscale::store::default_path);
    if !matches!(cli.command, Command::Restore(_)) {
        commands::restore::at_start();
    }
    let result = match cli.command {
        Command::Run(a) => commands::run::run(&db, a),
        Command::Show(a) => commands::show::show_as(
            &db,
            &a.run,
            vmscale::report::export::Format::from_flags(a.markdown, a.csv, a.json),
        ),
        Command::Compare(a) => commands::compare::compare(&db, commands::compare::Request::from(a)),
        Command::List(a) => commands::list::list(
            &db,
            vmscale::report::export::Format::from_flags(a.markdown, a.csv, a.json),
        ),
        Command::Sysinfo(a) => commands::sysinfo::sysinfo(&a.root, a.json),
        Command::Restore(_) => commands::restore::restore(),
        Command::Report(a) => commands::report::report(&db, &a),
        Command::Fit(a) => commands::fit::fit(&db, &a),
        Command::Import(a) => commands::import::import(&db, &a),
        Command::Pcp(a) => commands::pcp::pcp(&a.root, a.json, a.per_cpu),
    };
    if let Err(e) = result {
        match &e {
            Error::Input(m) | Error::Failed(m) | Error::Exit(_, m) => eprintln!("vmscale: {m}"),
            Error::Interrupted => eprintln!(
                "vmscale: interrupted; samples taken so far are stored, run marked incomplete"
            ),
        }
        std::process::exit(e.exit_code());
    }
}
