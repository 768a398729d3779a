//! What a `vmscale guest` boot tells the guest about itself. The host puts
//! it on the guest kernel's command line as `vmscale.NAME=VALUE` parameters
//! (dotted, so the kernel neither complains nor hands them to init); the
//! guest's snapshot reads them back from /proc/cmdline, so every run the
//! guest stores carries them in its machine snapshot.

use serde::{Deserialize, Serialize};

/// The prefix of every parameter.
const PREFIX: &str = "vmscale.";

/// The shape QEMU was told to give the guest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct GuestTopology {
    pub cpus: usize,
    pub sockets: usize,
    pub dies: usize,
    /// Cores per die.
    pub cores: usize,
    pub threads: usize,
    /// Nodes with CPUs and memory.
    pub nodes: usize,
    /// Nodes with memory and no CPUs, after the others.
    pub memory_only_nodes: usize,
    /// Guest memory over all nodes, MiB.
    pub mem_mib: u64,
}

impl GuestTopology {
    /// "cpus:16,sockets:2,..." as it travels on the command line.
    fn encode(&self) -> String {
        format!(
            "cpus:{},sockets:{},dies:{},cores:{},threads:{},nodes:{},memnodes:{},mem:{}",
            self.cpus,
            self.sockets,
            self.dies,
            self.cores,
            self.threads,
            self.nodes,
            self.memory_only_nodes,
            self.mem_mib
        )
    }

    fn decode(s: &str) -> Option<GuestTopology> {
        let mut t = GuestTopology::default();
        for part in s.split(',') {
            let (k, v) = part.split_once(':')?;
            let n: u64 = v.parse().ok()?;
            match k {
                "cpus" => t.cpus = n as usize,
                "sockets" => t.sockets = n as usize,
                "dies" => t.dies = n as usize,
                "cores" => t.cores = n as usize,
                "threads" => t.threads = n as usize,
                "nodes" => t.nodes = n as usize,
                "memnodes" => t.memory_only_nodes = n as usize,
                "mem" => t.mem_mib = n,
                _ => {}
            }
        }
        Some(t)
    }
}

/// Which kernel a guest booted: two builds of one release differ here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct GuestKernel {
    /// The name of the file given to `--kernel` (an image or a package).
    pub file: String,
    /// SHA-256 of the image QEMU loaded, in hex.
    pub sha256: String,
}

/// The revision of a tree a kernel was built from (`vmscale guest --tree`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct GuestRevision {
    /// The commit id (for the working tree: HEAD's).
    pub commit: String,
    /// The commit's subject line.
    pub subject: String,
    /// `git describe --always --tags` (`-dirty` for a changed working tree).
    pub describe: String,
}

/// The guest's own record of how it was booted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct GuestInfo {
    /// `--label` of this kernel, or its release.
    pub label: Option<String>,
    /// "kvm", "tcg" or "icount".
    pub accel: String,
    /// icount: a guest instruction took 2^shift ns of the guest's time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icount_shift: Option<u32>,
    /// The host's kernel release.
    pub host_kernel: Option<String>,
    /// This boot's round (1-based).
    pub round: Option<u32>,
    /// The rounds whose samples a pooled run holds (set on the host).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<u32>,
    /// This boot is the second of its round: the first was lost for a
    /// cause outside the kernel (stalled under TCG: no init, a CPU stuck,
    /// a silent console; or reset without a panic).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rebooted: bool,
    /// Why the round's first boot was lost, as vmscale said it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reboot_cause: Option<String>,
    /// The rounds of a pooled run whose boot was a second one (set on the
    /// host).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rebooted_rounds: Vec<u32>,
    /// One `vmscale guest` invocation: runs of one session were booted in
    /// turn, round by round, so they pair by round.
    pub session: Option<String>,
    pub topology: Option<GuestTopology>,
    /// KVM: guest memory preallocated on the host.
    pub prealloc: bool,
    /// KVM: the host CPU each vCPU thread is pinned to, in vCPU order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pinned: Vec<usize>,
    /// The kernel image booted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<GuestKernel>,
    /// The tree's revision the kernel was built from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<GuestRevision>,
    /// The guest ran the static vmscale of `cargo build-guest`, not the
    /// host's binary with its C library: its code is linked otherwise, so
    /// runs that differ here compare more than their kernels. Set in the
    /// guest by the binary itself.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub static_binary: bool,
    /// QEMU loaded the kernel's ELF image and entered it at its PVH entry
    /// (no decompressor, so no KASLR), not the bzImage.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pvh: bool,
}

/// Percent-encodes everything but a plain set, so a value never holds a
/// space or a quote on the kernel command line.
fn encode(v: &str) -> String {
    let mut out = String::new();
    for b in v.bytes() {
        if b.is_ascii_alphanumeric() || b".,:_+-".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn decode(v: &str) -> String {
    let bytes = v.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(b) = v
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl GuestInfo {
    /// The kernel command-line parameters that carry this record.
    pub fn to_params(&self) -> Vec<String> {
        let mut p = vec![format!("{PREFIX}accel={}", encode(&self.accel))];
        if let Some(s) = self.icount_shift {
            p.push(format!("{PREFIX}icount_shift={s}"));
        }
        if let Some(l) = &self.label {
            p.push(format!("{PREFIX}label={}", encode(l)));
        }
        if let Some(h) = &self.host_kernel {
            p.push(format!("{PREFIX}host={}", encode(h)));
        }
        if let Some(r) = self.round {
            p.push(format!("{PREFIX}round={r}"));
        }
        if self.rebooted {
            p.push(format!("{PREFIX}rebooted=1"));
        }
        if let Some(c) = &self.reboot_cause {
            p.push(format!("{PREFIX}reboot_cause={}", encode(c)));
        }
        if let Some(s) = &self.session {
            p.push(format!("{PREFIX}session={}", encode(s)));
        }
        if let Some(t) = &self.topology {
            p.push(format!("{PREFIX}topology={}", t.encode()));
        }
        if self.prealloc {
            p.push(format!("{PREFIX}prealloc=1"));
        }
        if !self.pinned.is_empty() {
            let cpus: Vec<String> = self.pinned.iter().map(usize::to_string).collect();
            p.push(format!("{PREFIX}pinned={}", cpus.join(":")));
        }
        if let Some(k) = &self.kernel {
            p.push(format!("{PREFIX}kfile={}", encode(&k.file)));
            p.push(format!("{PREFIX}ksha256={}", encode(&k.sha256)));
        }
        if self.pvh {
            p.push(format!("{PREFIX}pvh=1"));
        }
        if let Some(r) = &self.revision {
            p.push(format!("{PREFIX}commit={}", encode(&r.commit)));
            p.push(format!("{PREFIX}describe={}", encode(&r.describe)));
            p.push(format!("{PREFIX}subject={}", encode(&r.subject)));
        }
        p
    }

    /// The record on a kernel command line; `None` when the kernel was not
    /// booted by `vmscale guest` (no `vmscale.accel`).
    pub fn from_cmdline(cmdline: &str) -> Option<GuestInfo> {
        let mut g = GuestInfo::default();
        let mut any = false;
        for word in cmdline.split_whitespace() {
            let Some((k, v)) = word.strip_prefix(PREFIX).and_then(|kv| kv.split_once('=')) else {
                continue;
            };
            match k {
                "accel" => {
                    g.accel = decode(v);
                    any = true;
                }
                "icount_shift" => g.icount_shift = v.parse().ok(),
                "label" => g.label = Some(decode(v)),
                "host" => g.host_kernel = Some(decode(v)),
                "round" => g.round = v.parse().ok(),
                "rebooted" => g.rebooted = v == "1",
                "reboot_cause" => g.reboot_cause = Some(decode(v)),
                "session" => g.session = Some(decode(v)),
                "topology" => g.topology = GuestTopology::decode(v),
                "prealloc" => g.prealloc = v == "1",
                "pvh" => g.pvh = v == "1",
                "pinned" => g.pinned = v.split(':').filter_map(|c| c.parse().ok()).collect(),
                "kfile" => g.kernel.get_or_insert_with(Default::default).file = decode(v),
                "ksha256" => g.kernel.get_or_insert_with(Default::default).sha256 = decode(v),
                "commit" => g.revision.get_or_insert_with(Default::default).commit = decode(v),
                "describe" => {
                    g.revision.get_or_insert_with(Default::default).describe = decode(v);
                }
                "subject" => g.revision.get_or_insert_with(Default::default).subject = decode(v),
                _ => {}
            }
        }
        any.then_some(g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_survives_the_command_line() {
        let g = GuestInfo {
            label: Some("my build 2%".into()),
            accel: "icount".into(),
            icount_shift: Some(2),
            host_kernel: Some("6.1.0-48-amd64".into()),
            round: Some(3),
            rounds: Vec::new(),
            rebooted: true,
            reboot_cause: Some("reset: triple fault".into()),
            rebooted_rounds: Vec::new(),
            session: Some("a1b2".into()),
            topology: Some(GuestTopology {
                cpus: 16,
                sockets: 2,
                dies: 1,
                cores: 4,
                threads: 2,
                nodes: 4,
                memory_only_nodes: 1,
                mem_mib: 1280,
            }),
            prealloc: true,
            pinned: vec![0, 1, 0, 1],
            kernel: Some(GuestKernel {
                file: "linux-image-6.1.0-56-cloud-amd64_6.1.192-2_amd64.deb".into(),
                sha256: "ab".repeat(32),
            }),
            revision: Some(GuestRevision {
                commit: "0123456789abcdef0123456789abcdef01234567".into(),
                subject: "mm: a \"quoted\" subject, 100% real".into(),
                describe: "v6.1-3-g0123456".into(),
            }),
            static_binary: false,
            pvh: true,
        };
        let params = g.to_params();
        assert!(params.iter().all(|p| !p.contains(' ')), "{params:?}");
        let line = format!("console=ttyS0 quiet {} panic=-1", params.join(" "));
        assert_eq!(GuestInfo::from_cmdline(&line), Some(g));
        assert_eq!(GuestInfo::from_cmdline("console=ttyS0 quiet"), None);
        // A damaged value decodes to something, never panics.
        let odd = GuestInfo::from_cmdline("vmscale.accel=tcg vmscale.label=%Z%4 vmscale.round=x");
        assert_eq!(odd.unwrap().label.as_deref(), Some("%Z%4"));
    }
}
