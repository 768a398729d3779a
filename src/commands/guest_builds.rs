//! The kernels `vmscale guest --tree` builds: each revision built or found
//! in the cache, what is built and the config's differences said on stderr,
//! the build's stage and time on the progress bar.

use super::Result;
use super::progress::Bar;
use crate::cli::GuestArgs;
use crate::guest::tree::TreeKernel;
use crate::kbuild::Note;
use crate::kconfig;
use crate::runner::Progress as _;

/// The kernels of `--tree`'s revisions, built or found in the cache; the
/// plan (which are cached) and the config's differences from its base on
/// stderr, and the build's stage with its time on the progress bar.
pub(super) fn tree_kernels(a: &GuestArgs, shape: kconfig::Shape) -> Result<Vec<TreeKernel>> {
    let Some(tree) = &a.tree else {
        return Ok(Vec::new());
    };
    let quiet = super::output::quiet();
    let bar = Bar::new("builds").ticking();
    let say = |text: &str| {
        if !quiet {
            bar.say_raw(&super::output::wrap(text, super::output::WIDTH));
        }
    };
    let (mut stage, mut since) = (String::new(), std::time::Instant::now());
    let built = crate::guest::tree::kernels(
        tree,
        &a.revs,
        (&a.tree_config.config, &a.tree_config.config_items),
        shape,
        &mut |note| match note {
            Note::Plan(line) => say(&format!("kernel build: {line}\n")),
            Note::Config(text) => say(text),
            Note::Warn(text) => say(&format!("warning: {text}\n")),
            Note::Stage(s) => {
                (stage, since) = (s, std::time::Instant::now());
                bar.note(&format!("building {stage}"));
            }
            Note::Tick => bar.note(&format!(
                "building {stage} ({} s)",
                since.elapsed().as_secs()
            )),
        },
    );
    bar.finish();
    built
}
