//! How a guest boots and what decides between kernels: the options
//! `vmscale guest` and `vmscale bisect` share (and a third command can
//! flatten), each typed once as clap parses it.

use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

use super::accel::Asked;
use crate::error::{Error, Result};
use crate::stats::decide::MIN_ROUNDS;

/// The most rounds of one pair of kernels when `--max-rounds` is not given.
pub const DEFAULT_MAX_ROUNDS: u32 = 30;

/// The boot options: the guest's shape, its kernel's entry and command
/// line, what runs before the plan, and the rule that decides.
#[derive(Args, Debug, Clone)]
pub struct BootOptions {
    /// vCPUs [default: the fewest that fill the nodes, sockets, dies and threads]
    #[arg(long)]
    pub cpus: Option<usize>,
    /// NUMA nodes with CPUs (the CPUs are split over them in order)
    #[arg(long, default_value_t = 1)]
    pub nodes: usize,
    /// Guest memory over all nodes (split evenly), in whole MiB
    #[arg(long = "mem", value_name = "SIZE", default_value = "1G", value_parser = mem_mib)]
    pub mem_mib: u64,
    /// auto: KVM where a probe boot shows it works, else TCG (the CPU emulated);
    /// icount: TCG whose clock is the instruction count (figures the host's load
    /// does not move, comparable only with icount runs)
    #[arg(long, value_enum, default_value = "auto")]
    pub accel: Asked,
    /// QEMU's -cpu model [default: host under KVM; max under TCG, Skylake-Server with SMT or dies]
    #[arg(long, value_name = "MODEL")]
    pub cpu: Option<String>,
    /// Where QEMU enters each kernel
    #[arg(long, value_enum, default_value = "auto")]
    pub entry: Entry,
    /// Modules of a bzImage kernel (a lib/modules/RELEASE directory) [default:
    /// /lib/modules/RELEASE where it exists; a .deb brings its own]
    #[arg(long, value_name = "DIR")]
    pub modules: Option<PathBuf>,
    /// Added to every guest kernel's command line
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    pub append: Vec<String>,
    /// A shell line run in the guest before the plan (e.g. a debugfs write); repeatable
    #[arg(long, value_name = "LINE", allow_hyphen_values = true)]
    pub setup: Vec<String>,
    /// Stop a guest after this long [default: derived from the plan]
    #[arg(long, value_name = "DURATION", value_parser = crate::parse::duration)]
    pub timeout: Option<Duration>,
    /// The figure that decides [default: the headline of the plan's first run]
    #[arg(long, value_name = "FIGURE")]
    pub figure: Option<String>,
    /// The band 1 ± THRESHOLD ("10%") a ratio is "same" inside and "different"
    /// outside [default: 10% under TCG, 3% under KVM]
    #[arg(long, value_name = "THRESHOLD", value_parser = threshold)]
    pub decide: Option<f64>,
    /// The most rounds of one pair of kernels before it is called undecided
    /// [default: 30]
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u32).range(MIN_ROUNDS as i64..=100))]
    pub max_rounds: Option<u32>,
}

impl BootOptions {
    /// `--max-rounds`, or its default.
    pub fn max_rounds(&self) -> u32 {
        self.max_rounds.unwrap_or(DEFAULT_MAX_ROUNDS)
    }

    /// `--append` as one command line.
    pub fn appended(&self) -> String {
        self.append.join(" ")
    }
}

/// `--entry`: the kernel's ELF image entered at its PVH entry (unpacked
/// once into the cache; the decompressor and its KASLR do not run), or
/// the bzImage through its decompressor (KASLR on).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// The PVH entry where the kernel has one under TCG (some 0.15 s less
    /// an emulated boot); the bzImage under KVM, whose decompressor runs at
    /// the CPU's speed and whose kernel is then placed as on hardware
    Auto,
    /// The PVH entry where the kernel has one, under KVM too
    Pvh,
    /// The bzImage through its decompressor, under TCG too
    Bzimage,
}

impl Entry {
    /// Whether kernels are entered at their PVH entry under `accel`.
    pub fn pvh(self, accel: super::qemu::Accel) -> bool {
        match self {
            Entry::Auto => accel.emulated(),
            Entry::Pvh => true,
            Entry::Bzimage => false,
        }
    }
}

/// `--mem`: a size in whole MiB.
pub fn mem_mib(text: &str) -> Result<u64> {
    let bytes = crate::parse::size(text)?;
    if bytes % (1 << 20) != 0 {
        return Err(Error::Input("give whole MiB, e.g. 1G or 768M".into()));
    }
    Ok(bytes >> 20)
}

/// `--mem` as a key or a label writes it: whole GiB as `G`, else `M`.
pub fn mem_text(mib: u64) -> String {
    if mib.is_multiple_of(1024) {
        format!("{}G", mib / 1024)
    } else {
        format!("{mib}M")
    }
}

/// `--decide`: "10%", "10 %" or "0.1" as a fraction in (0, 1).
pub fn threshold(s: &str) -> Result<f64> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|p| p / 100.0),
        None => t.parse::<f64>(),
    };
    match v {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err(Error::Input(
            "give the band around a ratio of 1 as a percentage between 0 and 100, e.g. 10%".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        boot: BootOptions,
    }

    fn parse(args: &[&str]) -> std::result::Result<BootOptions, clap::Error> {
        Cmd::try_parse_from(std::iter::once("t").chain(args.iter().copied())).map(|c| c.boot)
    }

    #[test]
    fn values_are_typed_as_parsed() {
        let b = parse(&["--mem", "512M", "--timeout", "2m", "--decide", "5%"]).unwrap();
        assert_eq!(b.mem_mib, 512);
        assert_eq!(b.timeout, Some(Duration::from_secs(120)));
        assert!((b.decide.unwrap() - 0.05).abs() < 1e-12);
        assert_eq!(b.max_rounds(), DEFAULT_MAX_ROUNDS);
        let d = parse(&[]).unwrap();
        assert_eq!((d.mem_mib, d.cpus, d.nodes), (1024, None, 1));
    }

    #[test]
    fn bad_values_are_refused_naming_option_and_value() {
        for (args, want) in [
            (&["--mem", "1000K"][..], "'1000K' for '--mem"),
            (&["--mem", "lots"], "'lots' for '--mem"),
            (&["--decide", "150%"], "'150%' for '--decide"),
            (&["--decide", "0"], "'0' for '--decide"),
            (&["--max-rounds", "2"], "'2' for '--max-rounds"),
            (&["--max-rounds", "101"], "'101' for '--max-rounds"),
            (&["--timeout", "soon"], "'soon' for '--timeout"),
        ] {
            let e = parse(args).unwrap_err().to_string();
            assert!(e.contains(want), "{args:?}: {e}");
        }
    }

    #[test]
    fn mem_text_writes_what_a_user_types() {
        assert_eq!(mem_text(1024), "1G");
        assert_eq!(mem_text(512), "512M");
        assert_eq!(mem_text(3072), "3G");
        assert_eq!(mem_text(mem_mib("1536M").unwrap()), "1536M");
    }
}
