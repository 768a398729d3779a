//! `vmscale cache`: each entry of the cache with its kind, size and last
//! use; `vmscale cache prune`: least recently used first, down to a size
//! or past an age (docs/cache.md).

use std::path::Path;
use std::time::SystemTime;

use super::Result;
use crate::cache::scan::{Entry, scan};
use crate::cache::{cache_dir, cap, lock, prune};
use crate::cli::{CacheArgs, CacheCommand, CachePruneArgs};

/// Columns of a line: kind, name, size, last use ("12.0 min ago *");
/// a prune's lines start with what it did and give the name less room.
const KIND: usize = 8;
const NAME: usize = 42;
const PRUNED_NAME: usize = 34;
const SIZE: usize = 10;

pub fn cache(a: &CacheArgs) -> Result<()> {
    cap::configure()?;
    let root = cache_dir();
    match &a.prune {
        None => list(&root, a.json.json),
        Some(CacheCommand::Prune(p)) => prune_cmd(&root, p, a.json.json || p.json.json),
    }
}

/// "3.1 h ago".
fn ago(e: &Entry, now: SystemTime) -> String {
    format!("{} ago", crate::units::duration(e.idle(now).as_secs_f64()))
}

/// One entry as a line: kind, name (clipped to `room`), size, `last`.
fn line(e: &Entry, room: usize, last: &str) -> String {
    format!(
        "{:<KIND$} {:<room$} {:>SIZE$}  {last}",
        e.kind.name,
        crate::text::clip(&e.name, room),
        crate::units::memory(e.bytes)
    )
}

/// Whether a running vmscale holds the entry.
fn in_use(e: &Entry) -> bool {
    matches!(lock::try_exclusive(&e.path), Ok(None))
}

fn last_use(e: &Entry) -> Option<String> {
    jiff::Timestamp::try_from(e.last_use)
        .ok()
        .map(crate::timefmt::format)
}

fn entry_json(e: &Entry, now: SystemTime) -> serde_json::Value {
    serde_json::json!({
        "kind": e.kind.name,
        "name": e.name,
        "path": e.path,
        "bytes": e.bytes,
        "last_use": last_use(e),
        "idle_s": e.idle(now).as_secs(),
    })
}

/// "cap 16 GiB (VMSCALE_CACHE_MAX)" or "no cap (VMSCALE_CACHE_MAX=off)".
fn cap_text() -> String {
    match cap::get() {
        Some(c) => format!("cap {} ({})", crate::units::size(c), cap::ENV),
        None => format!("no cap ({}=off)", cap::ENV),
    }
}

/// The lines on temporaries ("N temporaries (SIZE) `said`") and on kind
/// directories not read.
fn leftovers(temporaries: &[Entry], said: &str, passed: &[String]) -> String {
    let mut out = String::new();
    if !temporaries.is_empty() {
        let bytes: u64 = temporaries.iter().map(|e| e.bytes).sum();
        let n = temporaries.len();
        let size = crate::units::memory(bytes);
        out += &format!("{n} temporaries ({size}) {said}\n");
    }
    for p in passed {
        out += &crate::text::clip(&format!("not read: {p}"), 80);
        out.push('\n');
    }
    out
}

fn list(root: &Path, json: bool) -> Result<()> {
    let now = SystemTime::now();
    let s = scan(root);
    if json {
        let entries: Vec<_> = s
            .entries
            .iter()
            .map(|e| {
                let mut v = entry_json(e, now);
                v["in_use"] = in_use(e).into();
                v
            })
            .collect();
        let temporaries: Vec<_> = s.temporaries.iter().map(|e| entry_json(e, now)).collect();
        return super::print_json(&serde_json::json!({
            "dir": root,
            "cap_bytes": cap::get(),
            "total_bytes": s.total(),
            "entries": entries,
            "temporaries": temporaries,
            "not_read": s.passed,
        }));
    }
    let mut out = format!(
        "{:<KIND$} {:<NAME$} {:>SIZE$}  last use\n",
        "kind", "entry", "size"
    );
    let mut held = 0;
    for e in &s.entries {
        let mut last = ago(e, now);
        if in_use(e) {
            held += 1;
            last.push_str(" *");
        }
        out += &line(e, NAME, &last);
        out.push('\n');
    }
    if held > 0 {
        out += "* in use by a running vmscale: a prune keeps it\n";
    }
    out += &leftovers(
        &s.temporaries,
        "left by writers: `vmscale cache prune` removes them",
        &s.passed,
    );
    out += &format!(
        "total {} in {} entries; {}\n",
        crate::units::memory(s.total()),
        s.entries.len(),
        cap_text()
    );
    out += &crate::text::clip(&format!("cache: {}", root.display()), 80);
    out.push('\n');
    super::output::text(&out)
}

fn prune_cmd(root: &Path, p: &CachePruneArgs, json: bool) -> Result<()> {
    let now = SystemTime::now();
    let limits = prune::Limits {
        max_size: p.max_size.or(if p.older_than.is_none() {
            cap::get()
        } else {
            None
        }),
        older_than: p.older_than,
        only: None,
    };
    let o = prune::prune(root, &limits)?;
    if json {
        let skipped: Vec<_> = o
            .skipped
            .iter()
            .map(|(e, why)| {
                let mut v = entry_json(e, now);
                v["why"] = why.as_str().into();
                v
            })
            .collect();
        return super::print_json(&serde_json::json!({
            "dir": root,
            "max_size_bytes": limits.max_size,
            "older_than_s": limits.older_than.map(|d| d.as_secs_f64()),
            "removed": o.removed.iter().map(|e| entry_json(e, now)).collect::<Vec<_>>(),
            "kept": skipped,
            "temporaries": o.temporaries.iter().map(|e| entry_json(e, now)).collect::<Vec<_>>(),
            "not_read": o.passed,
            "bytes_before": o.before,
            "bytes_after": o.after,
        }));
    }
    let mut out = String::new();
    for e in &o.removed {
        out += &format!("removed {}\n", line(e, PRUNED_NAME, &ago(e, now)));
    }
    for (e, why) in &o.skipped {
        out += &format!("kept    {}\n", line(e, PRUNED_NAME, "in use"));
        out += &crate::text::clip(&format!("        {why}"), 80);
        out.push('\n');
    }
    out += &leftovers(
        &o.temporaries,
        "removed, killed writers left them",
        &o.passed,
    );
    out += &format!(
        "the cache held {}, now {}",
        crate::units::memory(o.before),
        crate::units::memory(o.after)
    );
    match limits.max_size {
        Some(max) if o.after > max => {
            out += &format!(
                ";\nover {} by what running vmscales hold\n",
                crate::units::size(max)
            )
        }
        _ => out.push('\n'),
    }
    super::output::text(&out)
}
