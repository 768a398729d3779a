//! The guest's shape: CPUs, sockets, dies, SMT threads, NUMA nodes with
//! their memory and distances. The options are checked against each other
//! before anything boots, and turned into QEMU's `-smp`, `-object` and
//! `-numa` arguments; the same value says what `sysinfo` must report
//! inside.

use crate::error::{Error, Result};
use crate::machine::guest::GuestTopology;

/// The topology options as given.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub cpus: Option<usize>,
    pub nodes: usize,
    pub sockets: usize,
    pub dies: usize,
    pub threads: usize,
    pub memory_only_nodes: usize,
    pub mem_mib: u64,
    /// `S-D=V` entries (one direction each).
    pub distances: Vec<(usize, usize, u32)>,
}

/// A topology QEMU can build and the kernel will report as asked.
#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    pub shape: GuestTopology,
    /// Distance from each node to each node (all nodes, memory-only last).
    pub distances: Vec<Vec<u32>>,
}

/// The most vCPUs a guest gets (QEMU's q35 limit without an IOMMU).
pub const MAX_CPUS: usize = 255;
/// The least memory per node the guest kernel and its initramfs live in.
pub const MIN_MIB_PER_NODE: u64 = 64;
/// The least memory of a whole guest: kernel, initramfs and a small plan.
pub const MIN_MIB: u64 = 256;

fn positive(name: &str, v: usize) -> Result<usize> {
    if v == 0 {
        return Err(Error::Input(format!("--{name} 0: give 1 or more")));
    }
    Ok(v)
}

/// "S-D=V,S-D=V" as given to `--distance`.
pub fn parse_distances(s: &str) -> Result<Vec<(usize, usize, u32)>> {
    let mut out = Vec::new();
    for entry in s.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let bad = || {
            Error::Input(format!(
                "--distance '{entry}': use SRC-DST=VALUE, e.g. 0-1=20 (several with commas)"
            ))
        };
        let (pair, v) = entry.split_once('=').ok_or_else(bad)?;
        let (s, d) = pair.split_once('-').ok_or_else(bad)?;
        out.push((
            s.trim().parse().map_err(|_| bad())?,
            d.trim().parse().map_err(|_| bad())?,
            v.trim().parse().map_err(|_| bad())?,
        ));
    }
    Ok(out)
}

/// The default distance between two different nodes: 20 within a socket
/// (or, on one socket with 4 or more nodes, within a pair of nodes), 30
/// across; memory-only nodes count as their own pair.
fn default_distance(s: usize, d: usize, sockets: usize, cpu_nodes: usize, all: usize) -> u32 {
    if s == d {
        return 10;
    }
    if sockets > 1 && cpu_nodes.is_multiple_of(sockets) && s < cpu_nodes && d < cpu_nodes {
        let per = cpu_nodes / sockets;
        return if s / per == d / per { 20 } else { 30 };
    }
    if all >= 4 && s / 2 != d / 2 { 30 } else { 20 }
}

impl Request {
    /// Checks the options against each other; the topology or a message
    /// naming the conflict and a fix.
    pub fn check(&self) -> Result<Topology> {
        let nodes = positive("nodes", self.nodes)?;
        let sockets = positive("sockets", self.sockets)?;
        let dies = positive("dies", self.dies)?;
        let threads = positive("threads", self.threads)?;
        let unit = sockets * dies * threads;
        let cpus = match self.cpus {
            Some(c) => positive("cpus", c)?,
            // The fewest CPUs that fill every socket, die and node alike.
            None => (1..=MAX_CPUS)
                .map(|k| k * unit)
                .find(|c| c % nodes == 0 && (c / nodes) % threads == 0)
                .unwrap_or(unit),
        };
        if cpus > MAX_CPUS {
            return Err(Error::Input(format!(
                "--cpus {cpus}: a guest has at most {MAX_CPUS} vCPUs"
            )));
        }
        if cpus % unit != 0 {
            return Err(Error::Input(format!(
                "--cpus {cpus} is not a multiple of sockets x dies x threads = \
                 {sockets} x {dies} x {threads} = {unit}: every die has the same cores"
            )));
        }
        if nodes > cpus || cpus % nodes != 0 {
            return Err(Error::Input(format!(
                "--nodes {nodes} does not divide --cpus {cpus}: every node gets the same \
                 number of CPUs (add --memory-only-nodes for nodes without CPUs)"
            )));
        }
        let per_node = cpus / nodes;
        if per_node % threads != 0 {
            return Err(Error::Input(format!(
                "{per_node} CPUs per node with --threads {threads} would split a core \
                 between nodes: make CPUs per node a multiple of {threads}"
            )));
        }
        let per_socket = cpus / sockets;
        if per_socket % per_node != 0 && per_node % per_socket != 0 {
            return Err(Error::Input(format!(
                "{per_node} CPUs per node and {per_socket} per socket: a node would span \
                 part of a socket; use a --nodes that divides or is divided by --sockets"
            )));
        }
        let all = nodes + self.memory_only_nodes;
        if self.mem_mib < MIN_MIB || self.mem_mib / (all as u64) < MIN_MIB_PER_NODE {
            return Err(Error::Input(format!(
                "--mem {}M over {all} nodes: a guest needs at least {MIN_MIB} MiB and \
                 {MIN_MIB_PER_NODE} MiB per node",
                self.mem_mib
            )));
        }
        if !self.mem_mib.is_multiple_of(all as u64) {
            return Err(Error::Input(format!(
                "--mem {}M does not split evenly over {all} nodes: give a multiple of {all} MiB",
                self.mem_mib
            )));
        }
        let mut distances: Vec<Vec<u32>> = (0..all)
            .map(|s| {
                (0..all)
                    .map(|d| default_distance(s, d, sockets, nodes, all))
                    .collect()
            })
            .collect();
        for &(s, d, v) in &self.distances {
            if s >= all || d >= all || s == d {
                return Err(Error::Input(format!(
                    "--distance {s}-{d}={v}: nodes are 0..{} and must differ",
                    all - 1
                )));
            }
            if !(11..=254).contains(&v) {
                return Err(Error::Input(format!(
                    "--distance {s}-{d}={v}: a remote distance lies in 11..254 (local is 10)"
                )));
            }
            distances[s][d] = v;
        }
        Ok(Topology {
            shape: GuestTopology {
                cpus,
                sockets,
                dies,
                cores: cpus / unit,
                threads,
                nodes,
                memory_only_nodes: self.memory_only_nodes,
                mem_mib: self.mem_mib,
            },
            distances,
        })
    }
}

impl Topology {
    /// All nodes, memory-only ones included.
    pub fn all_nodes(&self) -> usize {
        self.shape.nodes + self.shape.memory_only_nodes
    }

    /// The CPUs of node `n` (none for a memory-only node).
    pub fn node_cpus(&self, n: usize) -> Vec<usize> {
        if n >= self.shape.nodes {
            return Vec::new();
        }
        let per = self.shape.cpus / self.shape.nodes;
        (n * per..(n + 1) * per).collect()
    }

    /// Whether QEMU's TCG `max` CPU would hide the shape (it shows no SMT
    /// siblings or dies), so a named Intel model is used instead.
    pub fn needs_named_cpu(&self) -> bool {
        self.shape.threads > 1 || self.shape.dies > 1
    }

    /// QEMU's arguments for CPUs, memory and nodes; `prealloc` asks for
    /// the memory to be allocated before the guest starts.
    pub fn qemu_args(&self, prealloc: bool) -> Vec<String> {
        let t = &self.shape;
        let mut a = vec![
            "-smp".to_string(),
            format!(
                "cpus={},sockets={},dies={},cores={},threads={}",
                t.cpus, t.sockets, t.dies, t.cores, t.threads
            ),
            "-m".to_string(),
            format!("{}M", t.mem_mib),
        ];
        let all = self.all_nodes();
        let per = t.mem_mib / all as u64;
        let pre = if prealloc { ",prealloc=on" } else { "" };
        for n in 0..all {
            a.push("-object".into());
            a.push(format!("memory-backend-ram,id=m{n},size={per}M{pre}"));
            let cpus = self.node_cpus(n);
            a.push("-numa".into());
            a.push(match (cpus.first(), cpus.last()) {
                (Some(f), Some(l)) => format!("node,nodeid={n},cpus={f}-{l},memdev=m{n}"),
                _ => format!("node,nodeid={n},memdev=m{n}"),
            });
        }
        for s in 0..all {
            for d in 0..all {
                if s != d {
                    a.push("-numa".into());
                    a.push(format!("dist,src={s},dst={d},val={}", self.distances[s][d]));
                }
            }
        }
        a
    }
}

/// What the guest kernel brought up (`/out/shape`: online CPUs, nodes,
/// MemTotal KiB) against what QEMU was given: `None` when they agree (the
/// same rule /init applies before it runs the plan), else both named,
/// with the option a kernel that falls short usually lacks.
pub fn mismatch(shape: &str, given: &GuestTopology) -> Option<String> {
    let v: Vec<u64> = shape
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    let [cpus, nodes, mem_kib] = v[..] else {
        return Some(format!(
            "the guest reported its shape as '{}'",
            shape.trim()
        ));
    };
    let want_nodes = (given.nodes + given.memory_only_nodes) as u64;
    let least_kib = (given.mem_mib * 9 / 10).saturating_sub(64) * 1024;
    let mut wrong = Vec::new();
    if cpus != given.cpus as u64 {
        wrong.push(format!(
            "{cpus} online CPUs of the {} QEMU was given (a kernel without CONFIG_SMP, \
             or with a smaller CONFIG_NR_CPUS, brings up fewer)",
            given.cpus
        ));
    }
    if nodes != want_nodes {
        wrong.push(format!(
            "{nodes} NUMA nodes of the {want_nodes} QEMU was given (CONFIG_NUMA and \
             CONFIG_ACPI_NUMA read QEMU's nodes)"
        ));
    }
    if mem_kib < least_kib {
        wrong.push(format!(
            "{} MiB of memory (MemTotal) of the {} MiB QEMU was given",
            mem_kib / 1024,
            given.mem_mib
        ));
    }
    (!wrong.is_empty()).then(|| format!("the guest kernel brought up {}", wrong.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_guest_brought_up_is_held_against_what_it_was_given() {
        let given = GuestTopology {
            cpus: 2,
            nodes: 2,
            memory_only_nodes: 1,
            mem_mib: 1024,
            ..GuestTopology::default()
        };
        assert_eq!(mismatch("2 3 900000\n", &given), None);
        let m = mismatch("1 1 900000", &given).unwrap();
        assert!(
            m.contains("1 online CPUs of the 2") && m.contains("CONFIG_SMP"),
            "{m}"
        );
        assert!(m.contains("1 NUMA nodes of the 3"), "{m}");
        let m = mismatch("2 3 400000", &given).unwrap();
        assert!(
            m.contains("390 MiB of memory (MemTotal) of the 1024"),
            "{m}"
        );
        assert!(mismatch("", &given).is_some());
    }

    fn req(cpus: Option<usize>, nodes: usize, sockets: usize, threads: usize) -> Request {
        Request {
            cpus,
            nodes,
            sockets,
            dies: 1,
            threads,
            memory_only_nodes: 0,
            mem_mib: 1024,
            distances: Vec::new(),
        }
    }

    #[test]
    fn two_sockets_of_two_nodes_with_smt() {
        let t = req(Some(16), 4, 2, 2).check().unwrap();
        assert_eq!(t.shape.cores, 4);
        assert_eq!(t.node_cpus(3), vec![12, 13, 14, 15]);
        // Within a socket 20, across 30.
        assert_eq!(t.distances[0], vec![10, 20, 30, 30]);
        assert_eq!(t.distances[3], vec![30, 30, 20, 10]);
        let a = t.qemu_args(false).join(" ");
        assert!(
            a.contains("cpus=16,sockets=2,dies=1,cores=4,threads=2"),
            "{a}"
        );
        assert!(a.contains("node,nodeid=1,cpus=4-7,memdev=m1"), "{a}");
        assert!(a.contains("memory-backend-ram,id=m3,size=256M "), "{a}");
        assert!(a.contains("dist,src=0,dst=2,val=30"), "{a}");
        assert!(t.needs_named_cpu());
    }

    #[test]
    fn defaults_fill_the_shape() {
        assert_eq!(req(None, 2, 1, 1).check().unwrap().shape.cpus, 2);
        assert_eq!(req(None, 4, 2, 2).check().unwrap().shape.cpus, 8);
        assert_eq!(req(None, 1, 1, 1).check().unwrap().shape.cpus, 1);
    }

    #[test]
    fn impossible_shapes_are_named() {
        let e = |r: Request| r.check().unwrap_err().to_string();
        assert!(e(req(Some(6), 1, 1, 4)).contains("not a multiple"));
        assert!(e(req(Some(4), 3, 1, 1)).contains("does not divide"));
        assert!(e(req(Some(12), 4, 1, 2)).contains("split a core"));
        assert!(e(req(Some(12), 2, 3, 1)).contains("span"));
        assert!(e(req(Some(0), 1, 1, 1)).contains("--cpus 0"));
        assert!(e(req(Some(512), 1, 1, 1)).contains("at most"));
        let mut r = req(Some(2), 2, 1, 1);
        r.mem_mib = 100;
        assert!(e(r.clone()).contains("at least"));
        r.mem_mib = 1023;
        assert!(e(r.clone()).contains("evenly"));
        r.mem_mib = 1024;
        r.distances = parse_distances("0-1=20,1-2=20").unwrap();
        assert!(e(r.clone()).contains("nodes are 0..1"));
        r.distances = parse_distances("0-1=5").unwrap();
        assert!(e(r).contains("11..254"));
        crate::error::assert_input(parse_distances("0-1"));
    }

    #[test]
    fn memory_only_nodes_and_given_distances() {
        let mut r = req(Some(4), 4, 1, 1);
        r.memory_only_nodes = 1;
        r.mem_mib = 1280;
        r.distances = parse_distances("0-4=40").unwrap();
        let t = r.check().unwrap();
        assert_eq!(t.all_nodes(), 5);
        assert!(t.node_cpus(4).is_empty());
        assert_eq!(t.distances[0][4], 40);
        assert_eq!(t.distances[4][0], 30);
        assert_eq!(t.distances[0][1], 20);
        let a = t.qemu_args(true).join(" ");
        assert!(a.contains("node,nodeid=4,memdev=m4"), "{a}");
        assert!(a.contains("size=256M,prealloc=on"), "{a}");
    }
}
