//! Kernels from a tree (`--tree DIR --rev A --rev B`): the build room
//! (`kbuild`) builds or finds each revision's image, and each becomes a
//! kernel to boot that carries its revision, labelled by default with
//! its short commit id (all revisions of a tree share one release).

use std::path::Path;

use super::kernel::Kernel;
use super::kernel_config;
use crate::error::Result;
use crate::kbuild::{self, Note, config};
use crate::kconfig::Shape;

/// A kernel built from a tree, with its default label.
pub struct TreeKernel {
    pub kernel: Kernel,
    pub label: String,
    pub cached: bool,
}

/// Builds (or finds in the cache) the kernels of `revs` of `tree` for a
/// guest of `shape`: `--configitem`s that take away what it needs are
/// refused before the build, and each built kernel's config is checked
/// as a prebuilt kernel's is (exit 2 before it boots).
pub fn kernels(
    tree: &Path,
    revs: &[String],
    (base, items): (&str, &[String]),
    shape: Shape,
    on: &mut dyn FnMut(Note),
) -> Result<Vec<TreeKernel>> {
    let items = items
        .iter()
        .map(|i| config::Item::parse(i))
        .collect::<Result<Vec<_>>>()?;
    config::refuse_items(&items, shape)?;
    let req = kbuild::Request {
        tree: tree.to_path_buf(),
        revs: revs.to_vec(),
        base: config::Base::parse(base)?,
        items,
        cache: kbuild::cache_dir(),
    };
    kbuild::build(&req, on)?
        .into_iter()
        .map(|b| {
            // Everything the guest needs is built in: no modules directory,
            // not even the host's of the same release.
            let kernel = Kernel {
                modules: None,
                revision: Some(b.rev.revision.clone()),
                ..super::kernel::resolve(&b.image, None)?
            };
            let checked = kernel_config::check(&kernel, shape)?;
            if let Some(w) = kernel_config::warning(&kernel, &checked) {
                on(Note::Warn(w));
            }
            Ok(TreeKernel {
                label: b.rev.label(),
                cached: b.cached,
                kernel,
            })
        })
        .collect()
}
