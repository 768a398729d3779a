//! A command's options built only when it is the one invoked. vmscale
//! has some twenty commands and a guest runs one: under TCG, building the
//! options of all of them (clap's code run once, each block translated)
//! cost a guest's every vmscale start about a tenth of a second.
//! [`Deferred`] wraps a command's `Args`; [`eager`] builds them all at
//! once as before, for the completion scripts and the man page, whose
//! option order and `help` tree depend on it.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

use clap::builder::{Resettable, StyledStr};
use clap::{ArgMatches, Args, Command, FromArgMatches};

static EAGER: AtomicBool = AtomicBool::new(false);

/// From now on, every command's options are built with the command.
pub fn eager() {
    EAGER.store(true, Ordering::Relaxed);
}

/// `options` applied to `cmd` when `cmd` is invoked (or built), or at once
/// after [`eager`].
pub fn defer(cmd: Command, options: fn(Command) -> Command) -> Command {
    match EAGER.load(Ordering::Relaxed) {
        true => options(cmd),
        false => cmd.defer(options),
    }
}

/// A command's options of type `T`, added when the command is invoked.
#[derive(Debug, Clone)]
pub struct Deferred<T>(pub T);

/// `T`'s options, keeping the description `cmd` has: added late, the doc
/// comment of an `Args` struct would replace it.
fn options<T: Args>(cmd: Command) -> Command {
    let kept = |s: Option<&StyledStr>| s.cloned().map_or(Resettable::Reset, Resettable::Value);
    let (about, long) = (kept(cmd.get_about()), kept(cmd.get_long_about()));
    T::augment_args(cmd).about(about).long_about(long)
}

impl<T: Args> Args for Deferred<T> {
    fn augment_args(cmd: Command) -> Command {
        defer(cmd, options::<T>)
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }

    fn group_id() -> Option<clap::Id> {
        T::group_id()
    }
}

impl<T: FromArgMatches> FromArgMatches for Deferred<T> {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(m).map(Deferred)
    }

    fn from_arg_matches_mut(m: &mut ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches_mut(m).map(Deferred)
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(m)
    }

    fn update_from_arg_matches_mut(&mut self, m: &mut ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches_mut(m)
    }
}

impl<T> Deref for Deferred<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for Deferred<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser, Subcommand};

    /// A struct's doc comment, not the command's description
    #[derive(Args, Debug)]
    struct Opts {
        #[arg(long)]
        size: Option<u32>,
    }

    #[derive(Subcommand, Debug)]
    enum Sub {
        /// Grow the thing
        Grow(Deferred<Opts>),
    }

    #[derive(Parser, Debug)]
    struct Top {
        #[command(subcommand)]
        sub: Sub,
    }

    #[test]
    fn options_come_when_their_command_is_built_and_keep_its_about() {
        // Nothing in the library's tests turns on `eager`.
        let top = Top::command();
        let grow = top.find_subcommand("grow").expect("grow");
        assert_eq!(grow.get_arguments().count(), 0);
        let mut built = top.clone();
        built.build();
        let grow = built.find_subcommand("grow").expect("grow");
        assert!(grow.get_arguments().any(|a| a.get_long() == Some("size")));
        let about = grow.get_about().map(ToString::to_string);
        assert_eq!(about.as_deref(), Some("Grow the thing"));
        let Top {
            sub: Sub::Grow(opts),
        } = Top::try_parse_from(["top", "grow", "--size", "3"]).expect("parses");
        assert_eq!(opts.size, Some(3));
    }
}
