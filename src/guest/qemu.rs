//! QEMU's command line for one guest (q35, no default devices, the serial
//! console on stdout, the results disk on virtio-blk or NVMe; under
//! icount the guest's clock is its instruction count) and, under KVM, the
//! pinning of each vCPU thread to a host CPU through QMP before the guest
//! starts.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::topology::Topology;
use super::transport::Bus;
use crate::error::{Error, Result};
use crate::machine::guest::GuestInfo;

pub const QEMU: &str = "qemu-system-x86_64";

/// Under icount each guest instruction takes 2^ICOUNT_SHIFT ns of guest
/// time (4 ns: a 250 MHz CPU retiring one instruction a cycle).
pub const ICOUNT_SHIFT: u32 = 2;

/// How the guest's CPUs run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accel {
    Kvm,
    Tcg,
    /// TCG on one host thread whose clock is the instruction count
    /// (`-icount shift=ICOUNT_SHIFT,sleep=off`): the host's load does not
    /// reach the guest's figures, idle time costs nothing.
    Icount,
}

impl Accel {
    /// The guest's CPU is emulated (TCG, icount).
    pub fn emulated(self) -> bool {
        self != Accel::Kvm
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Accel::Kvm => "kvm",
            Accel::Tcg => "tcg",
            Accel::Icount => "icount",
        }
    }

    /// The default `--decide` band, what about 20 rounds can decide given
    /// the accelerator's between-boot spread: some 13 % a round under TCG
    /// on a quiet host, a few % under KVM, none measured under icount
    /// (docs/guest.md's table).
    pub fn default_threshold(self) -> f64 {
        match self {
            Accel::Kvm => 0.03,
            Accel::Tcg => 0.10,
            Accel::Icount => 0.02,
        }
    }
}

/// Everything one QEMU invocation is given.
pub struct Machine<'a> {
    pub accel: Accel,
    /// `-cpu`; `None` picks one for the accelerator and topology.
    pub cpu: Option<&'a str>,
    pub topology: &'a Topology,
    pub kernel: &'a Path,
    pub initrd: &'a Path,
    pub append: &'a str,
    pub disk: Option<(&'a Path, Bus)>,
    /// KVM: preallocate memory and start paused for pinning over QMP.
    pub qmp: Option<&'a Path>,
}

/// The `-cpu` model: the host's under KVM; under TCG `max`, or a named
/// Intel model when the shape has SMT siblings or dies (TCG's `max` is
/// AMD-like and shows neither).
pub fn cpu_model(m: &Machine) -> String {
    if let Some(c) = m.cpu {
        return c.to_string();
    }
    match m.accel {
        Accel::Kvm => "host".into(),
        Accel::Tcg | Accel::Icount if m.topology.needs_named_cpu() => "Skylake-Server".into(),
        Accel::Tcg | Accel::Icount => "max".into(),
    }
}

/// The arguments after the program name.
pub fn args(m: &Machine) -> Vec<String> {
    let mut a: Vec<String> = vec![
        "-machine".into(),
        "q35".into(),
        "-accel".into(),
        match m.accel {
            Accel::Kvm => "kvm".into(),
            Accel::Tcg => "tcg,thread=multi".into(),
            // icount counts on one thread: QEMU refuses it with MTTCG.
            Accel::Icount => "tcg,thread=single".into(),
        },
        "-cpu".into(),
        cpu_model(m),
    ];
    if m.accel == Accel::Icount {
        a.push("-icount".into());
        a.push(format!("shift={ICOUNT_SHIFT},sleep=off"));
    }
    // Preallocated only where vmscale starts the guest paused: a probe
    // boot need not touch all its memory first.
    a.extend(m.topology.qemu_args(m.qmp.is_some()));
    a.extend(
        [
            "-kernel",
            &m.kernel.to_string_lossy(),
            "-initrd",
            &m.initrd.to_string_lossy(),
            "-append",
            m.append,
            "-nodefaults",
            "-no-user-config",
            "-display",
            "none",
            "-serial",
            "stdio",
            "-monitor",
            "none",
            "-no-reboot",
            // How QEMU's run ended, on its stderr: a guest's power-off is
            // traced with its cause; a reset under -no-reboot is not.
            "-trace",
            SHUTDOWN_TRACE,
        ]
        .map(String::from),
    );
    if let Some((d, bus)) = m.disk {
        a.extend(bus.qemu_args(d));
    }
    if let Some(q) = m.qmp {
        a.push("-S".into());
        a.push("-qmp".into());
        a.push(format!("unix:{},server=on,wait=off", q.display()));
    }
    a
}

/// The QEMU command, stdin closed, console on stdout, stderr to `errors`;
/// an emulated CPU's resets (a triple fault says so) logged beside it.
pub fn command(m: &Machine, errors: &Path) -> Result<Command> {
    let err = std::fs::File::create(errors).map_err(|e| Error::io("cannot create", errors, e))?;
    let mut c = Command::new(QEMU);
    c.args(args(m));
    if m.accel.emulated() {
        c.args(["-d", "cpu_reset", "-D"])
            .arg(errors.with_file_name(super::files::QEMU_LOG));
    }
    c.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(err);
    Ok(c)
}

/// QEMU's trace event for a shutdown request, with its cause.
const SHUTDOWN_TRACE: &str = "qemu_system_shutdown_request";
/// QEMU's `ShutdownCause` of a guest's own power-off.
const GUEST_SHUTDOWN: u32 = 6;

/// Why a QEMU that exited by itself (with `-no-reboot`) ended, read from
/// its stderr (`errors`) and, for an emulated CPU, its log (`log`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExitCause {
    /// The guest powered off.
    PoweredOff,
    /// The guest reset itself: under -no-reboot QEMU exits. Without a
    /// panic on the console that is a triple fault (`triple_fault`: QEMU's
    /// log of an emulated CPU says so) or a reset by the hardware QEMU
    /// emulates.
    Reset { triple_fault: bool },
    /// QEMU asked to shut down for another cause (its `ShutdownCause`).
    Shutdown(u32),
    /// QEMU ended by a signal or with an error status.
    Failed(Option<i32>),
}

impl ExitCause {
    /// Reads the cause of an exit with `code` from QEMU's stderr and log.
    pub fn read(code: Option<i32>, errors: &str, log: &str) -> ExitCause {
        if code != Some(0) {
            return ExitCause::Failed(code);
        }
        let cause = errors.lines().find_map(|l| {
            let rest = l.split_once(SHUTDOWN_TRACE)?.1;
            rest.trim()
                .strip_prefix("reason=")?
                .trim()
                .parse::<u32>()
                .ok()
        });
        match cause {
            Some(GUEST_SHUTDOWN) => ExitCause::PoweredOff,
            Some(c) => ExitCause::Shutdown(c),
            None => ExitCause::Reset {
                triple_fault: log.lines().any(|l| l.trim() == "Triple fault"),
            },
        }
    }

    /// Reads the cause of the exit of the QEMU whose stderr is `errors`.
    pub fn of(code: Option<i32>, errors: &Path) -> ExitCause {
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        let log = read(&errors.with_file_name(super::files::QEMU_LOG));
        ExitCause::read(code, &read(errors), &log)
    }

    /// Says the cause for a person.
    pub fn describe(&self) -> String {
        match self {
            ExitCause::PoweredOff => "QEMU exited as the guest powered off".into(),
            ExitCause::Reset { triple_fault: true } => "the guest's CPU triple-faulted (QEMU's \
                log says so) and reset, which ends QEMU under -no-reboot"
                .into(),
            ExitCause::Reset {
                triple_fault: false,
            } => "the guest reset itself without a \
                panic (a triple fault or a reset by the emulated hardware), which ends QEMU \
                under -no-reboot"
                .into(),
            ExitCause::Shutdown(c) => format!("QEMU shut down for its cause {c}"),
            ExitCause::Failed(None) => "QEMU was ended by a signal".into(),
            ExitCause::Failed(Some(c)) => format!("QEMU exited with status {c}"),
        }
    }
}

/// Whether QEMU is installed; a refusal naming the package otherwise.
pub fn check_installed() -> Result<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(QEMU))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            Error::Refused(format!(
                "{QEMU} is not installed: `apt-get install qemu-system-x86` (vmscale boots \
                 each kernel in QEMU)"
            ))
        })
}

/// Lines of QEMU's stderr worth showing: TCG names every CPU feature of a
/// named model it cannot emulate, once per vCPU.
pub fn stderr_worth_showing(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| {
            !l.contains("TCG doesn't support requested feature")
                && !l.contains(SHUTDOWN_TRACE)
                && !l.trim().is_empty()
        })
        .map(str::to_string)
        .collect()
}

/// A QMP session (JSON lines over the unix socket).
struct Qmp {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    within: Duration,
}

impl Qmp {
    fn connect(path: &Path, within: Duration) -> Result<Qmp> {
        let start = Instant::now();
        let stream = loop {
            match UnixStream::connect(path) {
                Ok(s) => break s,
                Err(e) if start.elapsed() > within => {
                    return Err(Error::Failed(format!(
                        "QEMU's QMP socket {} did not answer: {e}",
                        path.display()
                    )));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        };
        let io = |e| Error::io("cannot talk to QMP at", path, e);
        stream.set_read_timeout(Some(within)).map_err(io)?;
        let writer = stream.try_clone().map_err(io)?;
        let mut q = Qmp {
            reader: BufReader::new(stream),
            writer,
            within,
        };
        q.read_reply(path)?; // the greeting
        q.execute(path, "qmp_capabilities")?;
        Ok(q)
    }

    fn read_reply(&mut self, path: &Path) -> Result<serde_json::Value> {
        loop {
            let mut line = String::new();
            let n = self.reader.read_line(&mut line).map_err(|e| {
                use std::io::ErrorKind::{TimedOut, WouldBlock};
                if matches!(e.kind(), WouldBlock | TimedOut) {
                    Error::Failed(format!(
                        "QEMU did not answer on its QMP socket {} within {} s (it answers \
                         once the guest's memory is preallocated)",
                        path.display(),
                        self.within.as_secs()
                    ))
                } else {
                    Error::io("cannot read QMP at", path, e)
                }
            })?;
            if n == 0 {
                return Err(Error::Failed("QEMU closed its QMP socket".into()));
            }
            let v: serde_json::Value = serde_json::from_str(&line)
                .map_err(|e| Error::Failed(format!("QMP sent something not JSON: {e}")))?;
            // Events arrive between replies; a reply has return or error.
            if v.get("event").is_none() {
                return Ok(v);
            }
        }
    }

    fn execute(&mut self, path: &Path, cmd: &str) -> Result<serde_json::Value> {
        self.execute_with(path, cmd, serde_json::json!({}))
    }

    fn execute_with(
        &mut self,
        path: &Path,
        cmd: &str,
        arguments: serde_json::Value,
    ) -> Result<serde_json::Value> {
        let msg = format!(
            "{}\n",
            serde_json::json!({ "execute": cmd, "arguments": arguments })
        );
        self.writer
            .write_all(msg.as_bytes())
            .map_err(|e| Error::io("cannot write QMP at", path, e))?;
        let v = self.read_reply(path)?;
        if let Some(e) = v.get("error") {
            return Err(Error::Failed(format!("QMP {cmd}: {e}")));
        }
        Ok(v["return"].clone())
    }
}

/// Every vCPU's registers as QEMU's monitor prints them (`info
/// registers -a`), asked of a running QEMU over its QMP socket.
pub fn registers(qmp: &Path) -> Result<String> {
    let mut q = Qmp::connect(qmp, Duration::from_secs(5) * kvm_pace())?;
    let text = q.execute_with(
        qmp,
        "human-monitor-command",
        serde_json::json!({ "command-line": "info registers -a" }),
    )?;
    Ok(text.as_str().unwrap_or_default().to_string())
}

/// One line a vCPU of `info registers -a`'s text: where it was (CS's
/// selector and base, and RIP, or EIP before long mode), in which ring,
/// whether halted, CR0 (its PE and PG bits: real mode, protected mode,
/// paging) and CR3.
pub fn registers_summary(text: &str) -> Vec<String> {
    const WANTED: [&str; 6] = ["RIP", "EIP", "CPL", "HLT", "CR0", "CR3"];
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(cpu) = line.strip_prefix("CPU#") {
            out.push(format!(
                "vCPU {}",
                cpu.split_whitespace().next().unwrap_or("?")
            ));
            continue;
        }
        let Some(last) = out.last_mut() else { continue };
        // "CS =f000 000f0000 0000ffff 00009b00": selector, base, limit, flags.
        if let Some(cs) = line.strip_prefix("CS =") {
            let mut f = cs.split_whitespace();
            if let (Some(sel), Some(base)) = (f.next(), f.next()) {
                last.push_str(&format!(" CS={sel}@{base}"));
            }
            continue;
        }
        for field in line.split_whitespace() {
            if let Some((k, v)) = field.split_once('=')
                && WANTED.contains(&k)
            {
                last.push_str(&format!(" {k}={v}"));
            }
        }
    }
    out
}

/// How many times longer than on hardware the KVM path's bounds are here:
/// 10 where vmscale itself runs in a `vmscale guest` whose CPU is emulated
/// (its kernel's command line says so), since a nested KVM guest then runs
/// at the emulator's pace on a host that may be loaded (a probe boot there
/// printed nothing in 30 s beside `stress-ng --cpu 2`); 1 elsewhere.
pub fn kvm_pace() -> u32 {
    static PACE: OnceLock<u32> = OnceLock::new();
    *PACE.get_or_init(|| pace_of(crate::machine::kernel::cmdline(Path::new("/")).as_deref()))
}

fn pace_of(cmdline: Option<&str>) -> u32 {
    let emulated = cmdline
        .and_then(GuestInfo::from_cmdline)
        .is_some_and(|g| g.accel != "kvm");
    if emulated { 10 } else { 1 }
}

/// How long QEMU may take to answer QMP: it greets only once it has
/// preallocated the guest's memory, which takes time in proportion (a
/// 512 MiB guest under KVM inside a TCG guest took 10.3 s, about 50 MiB/s;
/// this allows 16 MiB/s, times [`kvm_pace`]).
fn prealloc_bound(mem_mib: u64) -> Duration {
    Duration::from_secs(30 + mem_mib / 16) * kvm_pace()
}

/// QEMU's resident memory in KiB, read through one of its threads.
fn resident_kib(tid: i64) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Checks the paused guest's `mem_mib` of memory is resident (QEMU
/// preallocates before it answers QMP), pins vCPU i's thread to
/// `host_cpus[i]` and starts the guest.
pub fn pin_and_start(qmp: &Path, host_cpus: &[usize], mem_mib: u64) -> Result<()> {
    let mut q = Qmp::connect(qmp, prealloc_bound(mem_mib))?;
    let cpus = q.execute(qmp, "query-cpus-fast")?;
    let first = cpus
        .as_array()
        .and_then(|c| c.first()?["thread-id"].as_i64());
    let rss = first.and_then(resident_kib).unwrap_or(0);
    if rss < mem_mib * 1024 {
        return Err(Error::Failed(format!(
            "QEMU's guest memory is not preallocated: {} MiB resident of the guest's \
             {mem_mib} MiB before it started",
            rss / 1024
        )));
    }
    for c in cpus.as_array().into_iter().flatten() {
        let (Some(i), Some(tid)) = (c["cpu-index"].as_u64(), c["thread-id"].as_i64()) else {
            continue;
        };
        let Some(cpu) = host_cpus.get(i as usize) else {
            continue;
        };
        crate::exec::pin::pin_thread(tid as libc::pid_t, *cpu)
            .map_err(|e| e.context(format!("vCPU {i} (thread {tid})")))?;
    }
    q.execute(qmp, "cont")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guest::topology::Request;

    fn topo(threads: usize) -> Topology {
        Request {
            cpus: Some(4),
            nodes: 2,
            sockets: 1,
            dies: 1,
            threads,
            memory_only_nodes: 0,
            mem_mib: 512,
            distances: Vec::new(),
        }
        .check()
        .unwrap()
    }

    #[test]
    fn a_hung_guests_registers_are_summed_up_a_line_a_vcpu() {
        // As `info registers -a` prints them (QEMU 7.2, x86_64), trimmed.
        let text = "CPU#0\r\nRAX=0000000000000000 RBX=0000000000000000\r\n\
                    RIP=0000000001000000 RFL=00000002 [-------] CPL=0 II=0 A20=1 SMM=0 HLT=0\r\n\
                    ES =0018 00000000 ffffffff 00c09300 DPL=0 DS   [-WA]\r\n\
                    CR0=00000011 CR2=0000000000000000 CR3=0000000000000000 CR4=00000000\r\n\
                    CPU#1\r\nRIP=000000000000fff0 RFL=00000002 [-------] CPL=0 II=0 A20=1 SMM=0 HLT=1\r\n\
                    CR0=60000010 CR2=0000000000000000 CR3=0000000000000000 CR4=00000000\r\n";
        assert_eq!(
            registers_summary(text),
            [
                "vCPU 0 RIP=0000000001000000 CPL=0 HLT=0 CR0=00000011 \
                 CR3=0000000000000000",
                "vCPU 1 RIP=000000000000fff0 CPL=0 HLT=1 CR0=60000010 \
                 CR3=0000000000000000",
            ]
        );
        assert!(registers_summary("no vCPU here\nRIP=1").is_empty());
        // Before long mode QEMU prints EIP and 32-bit control registers.
        let text = "CPU#0\nEAX=00000000 EBX=00000000\n\
                    EIP=0000fd1e EFL=00000002 [-------] CPL=0 II=0 A20=1 SMM=0 HLT=1\n\
                    CS =f000 000f0000 0000ffff 00009b00\n\
                    CR0=00000010 CR2=00000000 CR3=00000000 CR4=00000000\n";
        assert_eq!(
            registers_summary(text),
            ["vCPU 0 EIP=0000fd1e CPL=0 HLT=1 CS=f000@000f0000 CR0=00000010 CR3=00000000"]
        );
    }

    #[test]
    fn how_qemu_ended_is_read_from_its_trace_and_log() {
        let traced = "qemu_system_shutdown_request reason=6\n";
        assert_eq!(ExitCause::read(Some(0), traced, ""), ExitCause::PoweredOff);
        // Traced with a pid and a time stamp, as the log backend may.
        let stamped = "123@1700000000.000001:qemu_system_shutdown_request reason=6\n";
        assert_eq!(ExitCause::read(Some(0), stamped, ""), ExitCause::PoweredOff);
        assert_eq!(
            ExitCause::read(Some(0), "qemu_system_shutdown_request reason=2\n", ""),
            ExitCause::Shutdown(2)
        );
        // No power-off traced: the guest reset; the log says whether its
        // CPU triple-faulted.
        assert_eq!(
            ExitCause::read(Some(0), "", "CPU Reset (CPU 0)\nTriple fault\n"),
            ExitCause::Reset { triple_fault: true }
        );
        assert_eq!(
            ExitCause::read(Some(0), "", "CPU Reset (CPU 0)\n"),
            ExitCause::Reset {
                triple_fault: false
            }
        );
        assert_eq!(ExitCause::read(None, traced, ""), ExitCause::Failed(None));
        assert_eq!(ExitCause::read(Some(1), "", ""), ExitCause::Failed(Some(1)));
        assert!(
            ExitCause::Reset { triple_fault: true }
                .describe()
                .contains("triple-faulted")
        );
    }

    #[test]
    fn the_command_line_for_each_accelerator() {
        let t = topo(2);
        let mut m = Machine {
            accel: Accel::Tcg,
            cpu: None,
            topology: &t,
            kernel: Path::new("/k"),
            initrd: Path::new("/i"),
            append: "console=ttyS0 vmscale.accel=tcg",
            disk: Some((Path::new("/d.img"), Bus::Virtio)),
            qmp: None,
        };
        let a = args(&m).join(" ");
        assert!(
            a.contains("-accel tcg,thread=multi -cpu Skylake-Server"),
            "{a}"
        );
        assert!(a.contains("-append console=ttyS0 vmscale.accel=tcg"), "{a}");
        assert!(
            a.contains("-drive file=/d.img,format=raw,cache=unsafe,if=virtio"),
            "{a}"
        );
        assert!(!a.contains("prealloc") && !a.contains(" -S "), "{a}");
        assert!(a.contains("-trace qemu_system_shutdown_request"), "{a}");
        m.disk = Some((Path::new("/d.img"), Bus::Nvme));
        let a = args(&m).join(" ");
        assert!(
            a.contains(
                "-drive file=/d.img,format=raw,cache=unsafe,if=none,id=results \
                 -device nvme,serial=vmscale,drive=results,"
            ),
            "{a}"
        );
        assert!(!a.contains("-icount"), "{a}");
        m.accel = Accel::Icount;
        let a = args(&m).join(" ");
        assert!(
            a.contains("-accel tcg,thread=single -cpu Skylake-Server -icount shift=2,sleep=off"),
            "{a}"
        );
        m.accel = Accel::Tcg;
        let t1 = topo(1);
        m.topology = &t1;
        assert_eq!(cpu_model(&m), "max");
        m.accel = Accel::Kvm;
        m.qmp = Some(Path::new("/run/q.sock"));
        let a = args(&m).join(" ");
        assert!(a.contains("-accel kvm -cpu host"), "{a}");
        assert!(a.contains("prealloc=on"), "{a}");
        assert!(
            a.contains("-S -qmp unix:/run/q.sock,server=on,wait=off"),
            "{a}"
        );
        assert_eq!(
            stderr_worth_showing(
                "qemu: warning: TCG doesn't support requested feature: CPUID.01H:ECX.pcid\nreal\n\
                 qemu_system_shutdown_request reason=6\n"
            ),
            vec!["real"]
        );
    }

    #[test]
    fn kvm_bounds_stretch_only_inside_an_emulated_vmscale_guest() {
        let line = |accel: &str| format!("console=ttyS0 quiet vmscale.accel={accel}");
        assert_eq!(pace_of(Some(&line("tcg"))), 10);
        assert_eq!(pace_of(Some(&line("icount"))), 10);
        assert_eq!(pace_of(Some(&line("kvm"))), 1);
        assert_eq!(pace_of(Some("BOOT_IMAGE=/vmlinuz root=/dev/vda quiet")), 1);
        assert_eq!(pace_of(None), 1);
    }
}
