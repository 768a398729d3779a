//! What an ELF executable needs to run in a guest's root: the dynamic
//! loader it names (none for a static binary) and the shared libraries
//! that loader lists for it.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

/// How much of an ELF file's start is read for its program headers and
/// interpreter (both come first; the section headers, last, are not read).
const ELF_HEAD: u64 = 64 << 10;

/// The interpreter (dynamic loader) an ELF executable names: `Some(None)`
/// for a static one, `None` for a file that is not a 64-bit ELF or cannot
/// be read. Only the file's head is read: a boot reads its binaries'
/// heads, and a whole 12 MB binary read each boot cost the host some tens
/// of ms of fresh memory.
pub fn interpreter(path: &Path) -> Option<Option<PathBuf>> {
    use object::elf::{FileHeader64, PT_INTERP};
    use object::read::elf::{FileHeader, ProgramHeader};
    let mut head = Vec::new();
    File::open(path)
        .and_then(|f| f.take(ELF_HEAD).read_to_end(&mut head))
        .ok()?;
    let h = FileHeader64::<object::Endianness>::parse(&*head).ok()?;
    let e = h.endian().ok()?;
    for ph in h.program_headers(e, &*head).ok()? {
        if ph.p_type(e) == PT_INTERP {
            let data = ph.data(e, &*head).ok()?;
            let end = data.iter().position(|c| *c == 0).unwrap_or(data.len());
            let name = String::from_utf8_lossy(&data[..end]).into_owned();
            return Some(Some(PathBuf::from(name)));
        }
    }
    Some(None)
}

/// The shared libraries `exe` links (absolute paths; none for a static
/// binary), as its dynamic loader lists them (`ld.so --list`, what `ldd`
/// runs): a guest has no `ldd`, but its loader is in its root.
pub fn shared_libraries(exe: &Path) -> Vec<PathBuf> {
    let Some(Some(interp)) = interpreter(exe) else {
        return Vec::new();
    };
    let Ok(out) = Command::new(&interp).arg("--list").arg(exe).output() else {
        return Vec::new();
    };
    let mut libs: Vec<PathBuf> = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter(|w| w.starts_with('/'))
        .map(PathBuf::from)
        .chain(std::iter::once(interp))
        .filter(|p| p.is_file())
        .collect();
    libs.sort();
    libs.dedup();
    libs
}
