//! The guest's side, as busybox shell: /init mounts the kernel's file
//! systems (cgroup v2 too), loads the modules, checks the CPUs, nodes and
//! memory the kernel brought up against what QEMU was given (`/out/shape`;
//! a mismatch runs nothing), runs the setup lines and each plan step
//! (a vmscale command line) against the guest store, announces every
//! stage on the console (`vmscale-guest: ...` lines the host follows),
//! writes /out as a tar onto the results disk and powers off.

use super::files;

/// The prefix of every line the guest's init prints for the host.
pub const MARKER: &str = "vmscale-guest:";
/// How often a TCG guest's init says it is alive (`{MARKER} alive`).
pub const HEARTBEAT: std::time::Duration = std::time::Duration::from_secs(30);
/// The FIFO in the initramfs the heartbeat waits on.
pub const BEAT_FIFO: &str = "/beat";

/// A word in single quotes for sh.
pub fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Where /init reads the results disk's device node.
pub const DISK: &str = "/disk";

/// Where /init's `mount -a` finds the file systems to mount.
pub const FSTAB: &str = "/fstab";

/// The kernel's file systems /init mounts; debugfs and cgroup v2 (as
/// systemd mounts it: the memory cgroups of run vms) where the kernel has
/// them.
pub const MOUNTS: &str = "proc /proc proc defaults 0 0
sys /sys sysfs defaults 0 0
dev /dev devtmpfs defaults 0 0
tmp /tmp tmpfs defaults 0 0
debugfs /sys/kernel/debug debugfs nofail 0 0
cgroup2 /sys/fs/cgroup cgroup2 nofail 0 0
";

/// /init: everything but the plan and the setup lines.
pub fn init_script() -> String {
    format!(
        r#"#!/bin/sh
export PATH=/bin HOME=/root VMSCALE_DB=/out/{db} VMSCALE_STATE_DIR=/root/state
# The kernel's file systems, in one process: under TCG each fork and
# exec of busybox costs a boot some 15 ms, so shell builtins below too
# where a program would do.
mount -a -T {fstab}
read -r release < /proc/sys/kernel/osrelease
IFS= read -r cmdline < /proc/cmdline
echo "{m} up $release"
# Under TCG a heartbeat on the console: vmscale stops a guest whose console
# stays silent (QEMU's multi-threaded TCG can stall a guest without a word).
# It waits in the shell's own read on the initramfs's FIFO, which nobody
# writes: no fork, no exec, a beat.
case " $cmdline " in *" vmscale.accel=tcg "*)
  ( exec 3<> {fifo}; while :; do read -t {beat} _ <&3; echo "{m} alive"; done ) & ;;
esac
# A module with a CPU flag after its name (kvm_amd svm) loads only on a
# CPU that has it.
cpuflags=
while read mod flag; do
  if [ -n "$flag" ]; then
    [ -n "$cpuflags" ] || while IFS=: read -r k v; do
      case $k in flags*) cpuflags=" $v "; break ;; esac
    done < /proc/cpuinfo
    case $cpuflags in *" $flag "*) ;; *) continue ;; esac
  fi
  insmod /mods/$mod.ko || echo "{m} cannot load module $mod"
done < /modules.order
echo "$release" > /out/{release}
echo "$cmdline" > /out/{cmdline}
# The topology as the guest kernel sees it: one cp a directory (sysfs
# files claim 4096 bytes, which tar would trust, and the shell's read
# sees nothing in the CPU mask files).
t=/out/{topo}
dirs=
for d in /sys/devices/system/cpu /sys/devices/system/cpu/cpu[0-9]*/topology \
         /sys/devices/system/node /sys/devices/system/node/node[0-9]*; do
  [ -d "$d" ] && dirs="$dirs $d"
done
set --
for d in $dirs; do set -- "$@" "$t$d"; done
mkdir -p "$@"
for d in $dirs; do
  case $d in
    */cpu|*/node) IFS= read -r l < "$d/online" && echo "$l" > "$t$d/online" ;;
    */topology) cp "$d"/* "$t$d/" ;;
    *) cp "$d/cpulist" "$d/distance" "$d/meminfo" "$t$d/" ;;
  esac
done 2>/dev/null
# What the kernel brought up against what QEMU was given (the topology
# on the command line): online CPUs, nodes, MemTotal in KiB.
topo=
case " $cmdline " in *" vmscale.topology="*)
  topo=" $cmdline "; topo=${{topo##* vmscale.topology=}}; topo=${{topo%% *}} ;;
esac
wcpus= wnodes= wmemnodes= wmem=
IFS=,
for kv in $topo; do
  case $kv in
    cpus:*) wcpus=${{kv#*:}} ;; nodes:*) wnodes=${{kv#*:}} ;;
    memnodes:*) wmemnodes=${{kv#*:}} ;; mem:*) wmem=${{kv#*:}} ;;
  esac
done
# Online CPUs: the ranges of the kernel's list (0-3,6).
cpus=0
read -r online < /sys/devices/system/cpu/online
for r in $online; do
  case $r in
    *-*) cpus=$(( cpus + ${{r#*-}} - ${{r%-*}} + 1 )) ;;
    *) cpus=$(( cpus + 1 )) ;;
  esac
done
unset IFS
set -- /sys/devices/system/node/node[0-9]*
[ -e "$1" ] && nodes=$# || nodes=1
memkib=
while read -r k v _; do [ "$k" = MemTotal: ] && memkib=$v && break; done < /proc/meminfo
echo "$cpus $nodes $memkib" > /out/{shape}
shape_ok=1
if [ -n "$topo" ]; then
  # MemTotal leaves out what the kernel keeps: allow 64 MiB and a tenth.
  [ "$cpus" = "$wcpus" ] && [ "$nodes" = "$(( ${{wnodes:-0}} + ${{wmemnodes:-0}} ))" ] \
    && [ "$memkib" -ge "$(( (${{wmem:-0}} * 9 / 10 - 64) * 1024 ))" ] || shape_ok=0
fi
cd /root
if [ "$shape_ok" = 0 ]; then
  echo "{m} shape mismatch: $cpus CPUs, $nodes nodes, $memkib KiB"
else
  if [ -s /setup.sh ]; then
    echo "{m} setup"
    sh -x /setup.sh > /out/{setup_log} 2>&1
    echo $? > /out/{setup_status}
  fi
  # In this shell: one process fewer.
  . /plan.sh
fi
read -r disk < {disk}
i=0
while [ ! -b "$disk" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if [ -b "$disk" ]; then
  tar -cf "$disk" -C /out . && sync && echo "{m} results written"
else
  echo "{m} no results disk: $disk never appeared"
fi
poweroff -f
"#,
        m = MARKER,
        beat = HEARTBEAT.as_secs(),
        fifo = BEAT_FIFO,
        db = files::STORE,
        release = files::RELEASE,
        cmdline = files::CMDLINE,
        topo = files::TOPOLOGY,
        setup_log = files::SETUP_LOG,
        setup_status = files::SETUP_STATUS,
        shape = files::SHAPE,
        fstab = FSTAB,
        disk = DISK,
    )
}

/// /plan.sh: each step's output into /out/step-N.{{out,err,status}}.
pub fn plan_script(steps: &[Vec<String>]) -> String {
    let n = steps.len();
    let mut s = String::from("#!/bin/sh\n");
    for (i, step) in steps.iter().enumerate() {
        let k = i + 1;
        let words: Vec<String> = step.iter().map(|w| quote(w)).collect();
        s.push_str(&format!(
            "echo \"{MARKER} step {k}/{n} start\"\n\
             vmscale {} > /out/{} 2> /out/{}\n\
             rc=$?\necho $rc > /out/{}\n\
             echo \"{MARKER} step {k}/{n} exit $rc\"\n",
            words.join(" "),
            files::step_out(k),
            files::step_err(k),
            files::step_status(k),
        ));
    }
    s
}

/// /setup.sh: the `--setup` lines as given.
pub fn setup_script(lines: &[String]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let mut s = String::from("#!/bin/sh\n");
    for l in lines {
        s.push_str(l);
        s.push('\n');
    }
    s
}

/// The probe's /init: says it is up and powers off.
pub fn probe_script() -> String {
    format!("#!/bin/sh\necho \"{MARKER} probe ok\"\n/bin/busybox poweroff -f\n")
}

/// What a console line from init says, if it is one.
#[derive(Debug, Clone, PartialEq)]
pub enum Marker {
    Up(String),
    Setup,
    StepStart(usize, usize),
    StepExit(usize, usize, i32),
    Written,
    ProbeOk,
    /// The heartbeat of a TCG guest.
    Alive,
    Other(String),
}

/// Parses a console line.
pub fn marker(line: &str) -> Option<Marker> {
    let rest = line.trim().strip_prefix(MARKER)?.trim();
    let step = |s: &str| -> Option<(usize, usize)> {
        let (k, n) = s.split_once('/')?;
        Some((k.parse().ok()?, n.parse().ok()?))
    };
    let words: Vec<&str> = rest.split_whitespace().collect();
    Some(match words.as_slice() {
        ["up", release] => Marker::Up(release.to_string()),
        ["setup"] => Marker::Setup,
        ["step", kn, "start"] => step(kn).map(|(k, n)| Marker::StepStart(k, n))?,
        ["step", kn, "exit", rc] => {
            let (k, n) = step(kn)?;
            Marker::StepExit(k, n, rc.parse().ok()?)
        }
        ["results", "written"] => Marker::Written,
        ["probe", "ok"] => Marker::ProbeOk,
        ["alive"] => Marker::Alive,
        _ => Marker::Other(rest.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_for_sh() {
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        let plan = plan_script(&[vec![
            "run".into(),
            "pft".into(),
            "--label".into(),
            "x y".into(),
        ]]);
        assert!(plan.contains("vmscale 'run' 'pft' '--label' 'x y' > /out/step-1.out"));
        assert!(plan.contains("step 1/1 start"));
    }

    #[test]
    fn console_markers() {
        assert_eq!(
            marker("vmscale-guest: up 6.1.0-48-amd64\r"),
            Some(Marker::Up("6.1.0-48-amd64".into()))
        );
        assert_eq!(
            marker("vmscale-guest: step 2/3 exit 1"),
            Some(Marker::StepExit(2, 3, 1))
        );
        assert_eq!(
            marker("vmscale-guest: step 1/3 start"),
            Some(Marker::StepStart(1, 3))
        );
        assert_eq!(marker("vmscale-guest: alive"), Some(Marker::Alive));
        assert_eq!(marker("[    0.1] random kernel line"), None);
        assert_eq!(marker("vmscale-guest: step x/3 start"), None);
        assert_eq!(
            marker("vmscale-guest: cannot load module virtio"),
            Some(Marker::Other("cannot load module virtio".into()))
        );
        assert!(init_script().contains("tar -cf \"$disk\" -C /out ."));
        assert_eq!(setup_script(&[]), "");
    }
}
