//! Kernels built from a tree (`vmscale guest --tree DIR --rev A --rev B`):
//! each revision is exported into the cache (`git`), configured from a
//! base plus vmscale's fragment plus the user's items (`config`), built
//! out of tree (`make`) and stored under a key of the revision, the
//! config and the compiler (`cache`), so the same key is never built
//! twice and a later revision rebuilds only what changed in the build
//! directory of its config. The user's checkout is never touched.

pub mod cache;
pub mod config;
pub mod git;
pub mod make;

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::cache::lock;
use crate::error::{Error, Result};
use cache::{Cache, Record};
use config::{Base, Item};
use git::{Rev, Tree};

/// What to build.
pub struct Request {
    pub tree: PathBuf,
    pub revs: Vec<String>,
    pub base: Base,
    pub items: Vec<Item>,
    /// The cache directory (`kbuild/` below vmscale's cache).
    pub cache: PathBuf,
}

/// A kernel ready to boot.
#[derive(Debug, Clone)]
pub struct Built {
    pub rev: Rev,
    pub image: PathBuf,
    pub record: Record,
    /// Found in the cache, not built now.
    pub cached: bool,
}

/// What a build tells its caller as it goes.
pub enum Note<'a> {
    /// One line of the plan: a revision and whether it is cached.
    Plan(String),
    /// A stage began (export, config, make); the caller shows its time.
    Stage(String),
    /// make is running: called about every 200 ms.
    Tick,
    /// The config's description, once.
    Config(&'a str),
    /// A warning to print.
    Warn(String),
}

/// The cache directory of builds: `kbuild/` in vmscale's cache.
pub fn cache_dir() -> PathBuf {
    crate::cache::cache_dir().join("kbuild")
}

/// One revision and where its image goes.
struct Job {
    rev: Rev,
    key: String,
}

/// Builds (or finds) every revision of the request, in order.
pub fn build(req: &Request, on: &mut dyn FnMut(Note)) -> Result<Vec<Built>> {
    make::check_tools()?;
    let tree = Tree::open(&req.tree)?;
    let canonical = tree
        .dir
        .canonicalize()
        .map_err(|e| Error::io("cannot resolve", &tree.dir, e))?;
    let cache = Cache::open(&req.cache)?;
    let tdir = cache.tree_dir(&canonical);
    crate::state_dir::ensure_dir(&tdir)?;
    let revs = req
        .revs
        .iter()
        .map(|r| tree.resolve(r, &tdir))
        .collect::<Result<Vec<_>>>()?;
    let compiler = make::compiler_version()?;
    let additions = config::additions(&req.items);
    let base_key = match &req.base {
        Base::File { text, .. } => format!("file\n{text}"),
        Base::Target(t) => format!("target {t}"),
    };
    let config_key = cache::hash(&[&base_key, &additions]);
    let jobs: Vec<Job> = revs
        .into_iter()
        .map(|rev| {
            let key = cache::hash(&[&rev.id, &config_key, &compiler]);
            Job { rev, key }
        })
        .collect();
    for j in &jobs {
        let state = match cache.lookup(&j.key) {
            Some((_, r)) => format!("cached (built in {:.0} s)", r.build_seconds),
            None => "to build".to_string(),
        };
        on(Note::Plan(format!(
            "{} {} \"{}\": {state}",
            j.rev.given,
            j.rev.label(),
            j.rev.revision.subject
        )));
    }
    let build_dir = cache.build_dir(&canonical, &config_key, &compiler);
    let room = Room {
        tree: &tree,
        src: tdir.join("src"),
        index: tdir.join("index"),
        scratch: tdir.clone(),
        build: build_dir,
        base: &req.base,
        items: &req.items,
        additions: &additions,
        compiler: &compiler,
    };
    let mut out = Vec::new();
    let mut described = false;
    // Under the cache's lock no prune removes anything of it; the entries
    // this run uses are held past it, for its lifetime.
    lock::hold(&tdir)?;
    for j in &jobs {
        let (image, record, cached) = match cache.lookup(&j.key) {
            Some((image, record)) => (image, record, true),
            None => {
                let record = room.build(&j.rev, on)?;
                let image = cache.store(&j.key, &room.build, &record)?;
                (image, record, false)
            }
        };
        lock::hold(&cache.image_dir(&j.key))?;
        if !described {
            described = true;
            let text = config::describe(&req.base, req.items.len(), &record.differences, 78);
            on(Note::Config(&text));
        }
        out.push(Built {
            rev: j.rev.clone(),
            image,
            record,
            cached,
        });
    }
    if out.iter().any(|b| !b.cached) {
        lock::hold(&room.build)?;
        drop(cache);
        crate::cache::prune::to_cap();
    }
    Ok(out)
}

/// The directories and inputs of one tree's builds.
struct Room<'a> {
    tree: &'a Tree,
    src: PathBuf,
    index: PathBuf,
    scratch: PathBuf,
    build: PathBuf,
    base: &'a Base,
    items: &'a [Item],
    additions: &'a str,
    compiler: &'a str,
}

impl Room<'_> {
    fn make(&self) -> make::Make {
        make::Make {
            src: self.src.clone(),
            build: self.build.clone(),
            jobs: std::thread::available_parallelism().map_or(1, usize::from),
            ccache: make::installed("ccache"),
        }
    }

    /// Runs make; a failure is the revision's, with make's last lines.
    fn run(&self, rev: &Rev, args: &[&str], on: &mut dyn FnMut(Note)) -> Result<()> {
        let log = self.build.join("vmscale-make.log");
        match self.make().run(args, &log, &mut || on(Note::Tick))? {
            make::Ended::Ok => Ok(()),
            make::Ended::Failed(code, lines) => Err(Error::Failed(format!(
                "the kernel of --rev {} ({} \"{}\") did not build: make {} exited {}; its last \
                 {} lines:\n{}",
                rev.given,
                rev.label(),
                rev.revision.subject,
                args.join(" "),
                code.map_or("on a signal".to_string(), |c| c.to_string()),
                lines.len(),
                lines
                    .iter()
                    .map(|l| format!("  | {l}\n"))
                    .collect::<String>()
            ))),
        }
    }

    /// Exports, configures and builds one revision.
    fn build(&self, rev: &Rev, on: &mut dyn FnMut(Note)) -> Result<Record> {
        let start = Instant::now();
        on(Note::Stage(format!("{}: export", rev.label())));
        self.tree
            .export(rev, &self.src, &self.index, &self.scratch)?;
        std::fs::create_dir_all(&self.build)
            .map_err(|e| Error::io("cannot create", &self.build, e))?;

        on(Note::Stage(format!("{}: config", rev.label())));
        let dot = self.build.join(".config");
        match self.base {
            Base::Target(t) => self.run(rev, &[t], on)?,
            Base::File { text, .. } => {
                write(&dot, text)?;
                self.run(rev, &["olddefconfig"], on)?;
            }
        }
        let base = config::read(&self.build)?;
        write(&dot, &format!("{base}{}", self.additions))?;
        self.run(rev, &["olddefconfig"], on)?;
        let effective = config::read(&self.build)?;
        let eff = config::parse(&effective);
        let refused = config::not_taken(self.items, &eff);
        if !refused.is_empty() {
            let names: Vec<String> = refused.iter().map(|i| i.line()).collect();
            return Err(Error::Input(format!(
                "--configitem {}: not in the effective config of {} (an option unknown to this \
                 tree, or one whose dependencies are not met: add them with --configitem too)",
                names.join(", "),
                rev.label()
            )));
        }
        let lost: Vec<String> = config::parse(self.additions)
            .into_iter()
            .filter(|(n, v)| v == "y" && eff.get(n).is_none_or(|e| e == "n"))
            .map(|(n, _)| n)
            .collect();
        if !lost.is_empty() {
            on(Note::Warn(format!(
                "the kernel of {} lacks CONFIG_{} of vmscale's fragment (unknown to the tree or \
                 dependencies not met)",
                rev.label(),
                lost.join(", CONFIG_")
            )));
        }

        on(Note::Stage(format!("{}: make bzImage", rev.label())));
        self.run(rev, &["bzImage"], on)?;
        let release = std::fs::read_to_string(self.build.join("include/config/kernel.release"))
            .map_err(|e| Error::io("cannot read", &self.build, e))?
            .trim()
            .to_string();
        Ok(Record {
            revision: rev.revision.clone(),
            id: rev.id.clone(),
            release,
            config_hash: cache::hash(&[&effective]),
            compiler: self.compiler.to_string(),
            differences: config::differences(&base, &effective),
            build_seconds: start.elapsed().as_secs_f64(),
        })
    }
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|e| Error::io("cannot write", path, e))
}
