//! vmscale's entry point: parse arguments, call one command, map its error
//! to an exit code (2 bad input, 1 failed run, 130 interrupted).

use clap::Parser;
use vmscale::cli::{Cli, Command};
use vmscale::commands::{self, Error};

fn main() {
    let cli = Cli::parse();
    let db = cli.db.clone().unwrap_or_else(vmscale::store::default_path);
    let result = match cli.command {
        Command::Run(a) => commands::run::run(&db, a),
        Command::Show(a) => commands::show::show_as(
            &db,
            &a.run,
            vmscale::report::export::Format::from_flags(a.markdown, a.csv, a.json),
        ),
        Command::Compare(a) => commands::compare::compare(&db, commands::compare::Request::from(a)),
        Command::List(a) => commands::list::list(&db, a.json),
        Command::Sysinfo(a) => commands::sysinfo::sysinfo(&a.root, a.json),
    };
    if let Err(e) = result {
        match &e {
            Error::Input(m) | Error::Failed(m) => eprintln!("vmscale: {m}"),
            Error::Interrupted => eprintln!(
                "vmscale: interrupted; samples taken so far are stored, run marked incomplete"
            ),
        }
        std::process::exit(e.exit_code());
    }
}
