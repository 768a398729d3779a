//! Turns raw callchains into folded stacks: kernel addresses through
//! /proc/kallsyms, user addresses through this binary's own symbols (the
//! workers are its threads and forks), both by blazesym. Names are cached
//! across the samples of a run so each address is resolved once.

use std::collections::{BTreeMap, HashMap};

use blazesym::symbolize::source::{Kernel, Process, Source};
use blazesym::symbolize::{Input, Symbolized, Symbolizer};
use blazesym::{MaybeDefault, Pid};

/// perf's callchain context markers are the top 4095 values of u64.
const CONTEXT_MAX: u64 = u64::MAX - 4095 + 1;
const CONTEXT_KERNEL: u64 = (-128i64) as u64;
const CONTEXT_USER: u64 = (-512i64) as u64;

/// The suffix that marks a kernel frame in a folded stack (as perf's
/// stackcollapse does with --kernel).
pub const KERNEL_MARK: &str = "_[k]";

/// One callchain split into kernel and user frames, leaf first.
#[derive(Debug, Default, PartialEq)]
pub struct Frames {
    pub kernel: Vec<u64>,
    pub user: Vec<u64>,
}

/// Splits a raw perf callchain (leaf first, context markers between the
/// parts); a return address (every frame but the leaf) is moved back by one
/// byte so it falls inside the calling function.
pub fn split(chain: &[u64]) -> Frames {
    let mut f = Frames::default();
    let mut user = false;
    let mut first = true;
    for &ip in chain {
        if ip >= CONTEXT_MAX {
            user = match ip {
                CONTEXT_KERNEL => false,
                CONTEXT_USER => true,
                _ => user,
            };
            continue;
        }
        let ip = if first { ip } else { ip.saturating_sub(1) };
        first = false;
        if user {
            f.user.push(ip);
        } else {
            f.kernel.push(ip);
        }
    }
    f
}

/// A resolver of addresses to function names, kept for a run.
pub struct Symbols {
    symbolizer: Symbolizer,
    kernel: HashMap<u64, String>,
    user: HashMap<u64, String>,
}

impl Default for Symbols {
    fn default() -> Self {
        Symbols::new()
    }
}

impl Symbols {
    pub fn new() -> Symbols {
        Symbols {
            symbolizer: Symbolizer::new(),
            kernel: HashMap::new(),
            user: HashMap::new(),
        }
    }

    /// Folded stacks (root first, frames joined by `;`, kernel frames
    /// marked) with their sample counts.
    pub fn fold(&mut self, stacks: &HashMap<Vec<u64>, u64>) -> BTreeMap<String, u64> {
        let split: Vec<(Frames, u64)> = stacks.iter().map(|(c, n)| (split(c), *n)).collect();
        let mut want_k: Vec<u64> = Vec::new();
        let mut want_u: Vec<u64> = Vec::new();
        for (f, _) in &split {
            want_k.extend(f.kernel.iter().filter(|a| !self.kernel.contains_key(a)));
            want_u.extend(f.user.iter().filter(|a| !self.user.contains_key(a)));
        }
        let kernel_src = kernel_source();
        let user_src = Source::Process(Process {
            debug_syms: false,
            perf_map: false,
            ..Process::new(Pid::Slf)
        });
        resolve(&self.symbolizer, &kernel_src, want_k, &mut self.kernel);
        resolve(&self.symbolizer, &user_src, want_u, &mut self.user);
        let mut out = BTreeMap::new();
        for (f, n) in split {
            let mut names: Vec<String> = f
                .user
                .iter()
                .rev()
                .map(|a| self.user.get(a).cloned().unwrap_or_else(unknown))
                .collect();
            names.extend(f.kernel.iter().rev().map(|a| {
                let name = self.kernel.get(a).cloned().unwrap_or_else(unknown);
                format!("{name}{KERNEL_MARK}")
            }));
            if names.is_empty() {
                names.push(unknown());
            }
            *out.entry(names.join(";")).or_insert(0) += n;
        }
        out
    }

    /// The kernel function names of each chain, leaf first.
    pub fn kernel_names(&mut self, chains: &[Vec<u64>]) -> Vec<Vec<String>> {
        let split: Vec<Frames> = chains.iter().map(|c| split(c)).collect();
        let want: Vec<u64> = split
            .iter()
            .flat_map(|f| f.kernel.iter().copied())
            .filter(|a| !self.kernel.contains_key(a))
            .collect();
        resolve(&self.symbolizer, &kernel_source(), want, &mut self.kernel);
        split
            .iter()
            .map(|f| {
                f.kernel
                    .iter()
                    .map(|a| self.kernel.get(a).cloned().unwrap_or_else(unknown))
                    .collect()
            })
            .collect()
    }
}

/// The running kernel, from /proc/kallsyms alone (no vmlinux search).
fn kernel_source() -> Source<'static> {
    Source::Kernel(Kernel {
        vmlinux: MaybeDefault::None,
        debug_syms: false,
        ..Default::default()
    })
}

fn unknown() -> String {
    "[unknown]".to_string()
}

fn resolve(sym: &Symbolizer, src: &Source, mut addrs: Vec<u64>, into: &mut HashMap<u64, String>) {
    addrs.sort_unstable();
    addrs.dedup();
    if addrs.is_empty() {
        return;
    }
    let found = sym
        .symbolize(src, Input::AbsAddr(&addrs))
        .unwrap_or_default();
    for (i, a) in addrs.iter().enumerate() {
        let name = match found.get(i) {
            Some(Symbolized::Sym(s)) => clean(&s.name),
            _ => unknown(),
        };
        into.insert(*a, name);
    }
}

/// A frame name safe in a folded line: no `;`, no spaces, no newlines.
fn clean(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            ';' => ':',
            c if c.is_whitespace() => '_',
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_separates_contexts_and_moves_return_addresses() {
        let chain = [CONTEXT_KERNEL, 0x1000, 0x2000, CONTEXT_USER, 0x30, 0x40];
        let f = split(&chain);
        assert_eq!(f.kernel, vec![0x1000, 0x1fff]);
        assert_eq!(f.user, vec![0x2f, 0x3f]);
    }

    #[test]
    fn kernel_addresses_resolve_from_kallsyms_when_readable() {
        // The address of a function kallsyms names resolves to that name.
        let Ok(text) = std::fs::read_to_string("/proc/kallsyms") else {
            return;
        };
        let Some((addr, name)) = text.lines().find_map(|l| {
            let mut p = l.split_whitespace();
            let a = u64::from_str_radix(p.next()?, 16).ok()?;
            let t = p.next()?;
            let n = p.next()?;
            (a != 0 && (t == "T" || t == "t") && n == "schedule").then(|| (a, n.to_string()))
        }) else {
            return; // addresses hidden (kptr_restrict) for this user
        };
        let mut s = Symbols::new();
        let chain = vec![CONTEXT_KERNEL, addr + 1];
        let folded = s.fold(&HashMap::from([(chain, 3)]));
        assert_eq!(
            folded.get(&format!("{name}{KERNEL_MARK}")),
            Some(&3),
            "{folded:?}"
        );
    }
}
