//! Reads tracepoint ids and formats from tracefs. When tracefs is not
//! mounted, it is mounted in a private mount namespace of a short-lived
//! thread: nobody else ever sees the mount, and it disappears with the
//! thread, so nothing is left mounted even if vmscale is killed.

use crate::error::{Error, Result};
use std::path::Path;

const TRACEFS: &str = "/sys/kernel/tracing";

/// The text of each file under the tracefs `events/` directory (None when
/// it does not exist), and whether tracefs had to be mounted to read them.
pub fn read_event_files(rel: &[String]) -> Result<(Vec<Option<String>>, bool)> {
    let rel = rel.to_vec();
    std::thread::Builder::new()
        .name("vmscale-tracefs".into())
        .spawn(move || read_in_thread(&rel))
        .map_err(|e| Error::Failed(format!("cannot start a thread to read tracefs: {e}")))?
        .join()
        .map_err(|_| Error::Failed("the tracefs reader panicked".into()))?
}

fn read_all(root: &Path, rel: &[String]) -> Vec<Option<String>> {
    rel.iter()
        .map(|r| std::fs::read_to_string(root.join("events").join(r)).ok())
        .collect()
}

fn read_in_thread(rel: &[String]) -> Result<(Vec<Option<String>>, bool)> {
    for root in [TRACEFS, "/sys/kernel/debug/tracing"] {
        if Path::new(root).join("events").is_dir() {
            return Ok((read_all(Path::new(root), rel), false));
        }
    }
    private_mount()?;
    Ok((read_all(Path::new(TRACEFS), rel), true))
}

/// Gives this thread its own mount namespace (no propagation back) and
/// mounts tracefs there.
fn private_mount() -> Result<()> {
    let fix = "mount it yourself: mount -t tracefs nodev /sys/kernel/tracing";
    crate::exec::sys::unshare_mounts().map_err(|e| {
        Error::Failed(format!(
            "tracefs is not mounted and a private mount namespace cannot be made ({e}): {fix}"
        ))
    })?;
    let (root, target) = (Path::new("/"), Path::new(TRACEFS));
    let private = libc::MS_REC | libc::MS_PRIVATE;
    crate::exec::sys::mount(None, root, None, private, None)
        .and_then(|()| {
            let tracefs = Some(Path::new("tracefs"));
            crate::exec::sys::mount(tracefs, target, Some("tracefs"), 0, None)
        })
        .map_err(|e| {
            Error::Failed(format!(
                "tracefs is not mounted and cannot be mounted at {TRACEFS} ({e}): \
                 the kernel needs CONFIG_TRACING, or {fix}"
            ))
        })
}

/// One field of a tracepoint's record: where it lies in the raw data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Field {
    pub offset: usize,
    pub size: usize,
}

/// The field `name` of a tracepoint `format` file.
pub fn field(format: &str, name: &str) -> Option<Field> {
    format.lines().find_map(|l| {
        let decl = l.trim().strip_prefix("field:")?;
        let (decl, rest) = decl.split_once(';')?;
        let ident = decl.split_whitespace().last()?;
        let ident = ident.split('[').next()?;
        if ident != name {
            return None;
        }
        let num = |key: &str| -> Option<usize> {
            rest.split(';')
                .find_map(|p| p.trim().strip_prefix(key))
                .and_then(|v| v.trim().parse().ok())
        };
        Some(Field {
            offset: num("offset:")?,
            size: num("size:")?,
        })
    })
}

/// The unsigned value of `f` in a raw record (little or native endian).
pub fn read_u64(raw: &[u8], f: Field) -> Option<u64> {
    let b = raw.get(f.offset..f.offset + f.size)?;
    Some(match f.size {
        1 => b[0] as u64,
        2 => u16::from_ne_bytes(b.try_into().ok()?) as u64,
        4 => u32::from_ne_bytes(b.try_into().ok()?) as u64,
        8 => u64::from_ne_bytes(b.try_into().ok()?),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORMAT: &str = "name: contention_begin\nID: 412\nformat:\n\
        \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
        \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
        \tfield:void * lock_addr;\toffset:8;\tsize:8;\tsigned:0;\n\
        \tfield:unsigned int flags;\toffset:16;\tsize:4;\tsigned:0;\n";

    #[test]
    fn fields_are_found_by_name_with_offset_and_size() {
        assert_eq!(
            field(FORMAT, "flags"),
            Some(Field {
                offset: 16,
                size: 4
            })
        );
        assert_eq!(
            field(FORMAT, "lock_addr"),
            Some(Field { offset: 8, size: 8 })
        );
        assert_eq!(field(FORMAT, "nope"), None);
        let mut raw = vec![0u8; 20];
        raw[16..20].copy_from_slice(&5u32.to_ne_bytes());
        assert_eq!(read_u64(&raw, field(FORMAT, "flags").unwrap()), Some(5));
        assert_eq!(read_u64(&raw[..10], field(FORMAT, "flags").unwrap()), None);
    }

    #[test]
    fn tracepoint_ids_are_read_without_leaving_a_mount() {
        let before = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let got = read_event_files(&["mmap_lock/mmap_lock_released/id".to_string()]);
        let after = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        assert_eq!(before, after, "the mount table changed");
        if let Ok((files, _)) = got
            && let Some(id) = &files[0]
        {
            assert!(id.trim().parse::<u64>().is_ok(), "{id}");
        }
    }
}
