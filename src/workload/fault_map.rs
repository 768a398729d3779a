//! The memory a fault workload faults in: anonymous private, shared
//! anonymous (shm), memfd or a file on a path the user names; private or
//! shared; base pages, THP (madvise per mapping) or hugetlb. Files are
//! treated as hostile paths: created by us (O_EXCL, O_NOFOLLOW), sized,
//! their page cache dropped with fadvise, and removed only if the path still
//! names the inode we created.

use std::ffi::CString;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::exec::{self, region::Region};

/// What backs the memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Backing {
    Anon,
    Memfd,
    Shm,
    File,
}

/// Which fault the loop takes: a write, or a read (zero page on anonymous
/// memory, page cache and fault-around on files).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    Write,
    Read,
}

/// Page kind asked for per mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum PageKind {
    Base,
    Thp,
    Hugetlb,
}

/// The whole mapping choice of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Spec {
    pub backing: Backing,
    pub path: Option<PathBuf>,
    pub shared: bool,
    pub access: Access,
    pub pages: PageKind,
}

impl Default for Spec {
    fn default() -> Spec {
        Spec {
            backing: Backing::Anon,
            path: None,
            shared: false,
            access: Access::Write,
            pages: PageKind::Base,
        }
    }
}

impl Spec {
    /// Refuses combinations the kernel cannot give; `thp_shmem` is the
    /// machine's shmem_enabled selection.
    pub fn check(&self, thp_enabled: Option<&str>, thp_shmem: Option<&str>) -> Result<()> {
        match (self.backing, &self.path) {
            (Backing::File, None) => {
                return Err(Error::Input(
                    "--backing file needs --path PATH (a new file vmscale creates)".into(),
                ));
            }
            (Backing::File, Some(_)) => {}
            (_, Some(_)) => {
                return Err(Error::Input(
                    "--path only applies with --backing file".into(),
                ));
            }
            _ => {}
        }
        if self.backing == Backing::Shm && !self.shared {
            return Err(Error::Input(
                "--backing shm is shared anonymous memory: add --shared".into(),
            ));
        }
        if self.backing == Backing::Anon && self.shared {
            return Err(Error::Input(
                "shared anonymous memory is --backing shm; --backing anon is private".into(),
            ));
        }
        match self.pages {
            PageKind::Base => {}
            PageKind::Hugetlb if self.backing == Backing::File => {
                return Err(Error::Input(
                    "--pages hugetlb on a file needs a hugetlbfs mount: use \
                            --backing anon, shm or memfd"
                        .into(),
                ));
            }
            PageKind::Hugetlb => {}
            PageKind::Thp if self.backing == Backing::File => {
                return Err(Error::Input(
                    "--pages thp is chosen per mapping for anonymous and shmem \
                            memory only: use --backing anon, shm or memfd"
                        .into(),
                ));
            }
            PageKind::Thp if self.backing == Backing::Anon => match thp_enabled {
                Some("always") | Some("madvise") => {}
                other => {
                    return Err(Error::Input(format!(
                        "--pages thp needs /sys/kernel/mm/transparent_hugepage/enabled set to \
                         always or madvise (it is {}): change it with --knob thp=madvise, or \
                         use --pages base",
                        other.unwrap_or("unknown")
                    )));
                }
            },
            PageKind::Thp => match thp_shmem {
                Some("always") | Some("within_size") | Some("advise") | Some("force") => {}
                other => {
                    return Err(Error::Input(format!(
                        "--pages thp on shm/memfd needs /sys/kernel/mm/transparent_hugepage/\
                         shmem_enabled set to advise, within_size or always (it is {}): \
                         add --knob thp_shmem=advise, or use --pages base",
                        other.unwrap_or("unknown")
                    )));
                }
            },
        }
        Ok(())
    }

    /// One line for reports: "anon private write, base pages".
    pub fn describe(&self) -> String {
        format!(
            "{} {} {}, {} pages",
            match self.backing {
                Backing::Anon => "anon",
                Backing::Memfd => "memfd",
                Backing::Shm => "shm",
                Backing::File => "file",
            },
            if self.shared { "shared" } else { "private" },
            match self.access {
                Access::Write => "write",
                Access::Read => "read",
            },
            match self.pages {
                PageKind::Base => "base",
                PageKind::Thp => "THP",
                PageKind::Hugetlb => "hugetlb",
            }
        )
    }

    /// Whether the faults taken are known in advance: one per base page,
    /// or per huge page where THP or hugetlb served it (anonymous private
    /// memory, and hugetlb anywhere). Shared and file memory may map a
    /// whole large folio or fault around several pages per fault: those
    /// report pages per fault, measured.
    pub fn one_fault_per_page(&self) -> bool {
        self.pages == PageKind::Hugetlb
            || (self.backing == Backing::Anon
                && (self.access == Access::Write || self.pages == PageKind::Base))
    }
}

/// A file this run created and must remove: the path and the identity of
/// the inode, so a path swapped meanwhile is left alone.
#[derive(Debug)]
pub struct OwnedFile {
    pub file: File,
    path: Option<PathBuf>,
    dev_ino: (u64, u64),
}

impl OwnedFile {
    /// Creates `path` (refusing anything that already exists, symlinks
    /// included) and sizes it to `len` bytes.
    pub fn create(path: &Path, len: u64) -> Result<OwnedFile> {
        let file = crate::atomic_file::create_new(0o600)
            .read(true)
            .open(path)
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    Error::Input(format!(
                        "--path {} already exists: vmscale creates the file itself and never \
                         reuses one; remove it or name a new path",
                        path.display()
                    ))
                } else {
                    Error::Failed(format!("--path {}: cannot create it: {e}", path.display()))
                }
            })?;
        let meta = file
            .metadata()
            .map_err(|e| Error::Failed(format!("{}: {e}", path.display())))?;
        let owned = OwnedFile {
            file,
            path: Some(path.to_path_buf()),
            dev_ino: (meta.dev(), meta.ino()),
        };
        owned.size(len)?;
        Ok(owned)
    }

    /// An anonymous memory file (memfd), hugetlb-backed if asked.
    pub fn memfd(len: u64, hugetlb: bool) -> Result<OwnedFile> {
        let name = CString::new("vmscale").unwrap_or_default();
        let flags = libc::MFD_CLOEXEC | if hugetlb { libc::MFD_HUGETLB } else { 0 };
        // SAFETY: name is a valid C string; the result is checked.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), flags) };
        if fd < 0 {
            return Err(Error::Failed(format!(
                "memfd_create failed: {}",
                exec::errno_text()
            )));
        }
        // SAFETY: fd is a fresh descriptor we own.
        Self::unnamed(unsafe { File::from_raw_fd(fd) }, len)
    }

    /// An unnamed file in `dir` (O_TMPFILE): nothing to remove, nothing to
    /// race with.
    pub fn tmpfile(dir: &Path, len: u64) -> Result<OwnedFile> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_TMPFILE | libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .mode(0o600)
            .open(dir)
            .map_err(|e| {
                Error::Failed(format!(
                    "{}: cannot create an unnamed file (O_TMPFILE) there: {e}",
                    dir.display()
                ))
            })?;
        Self::unnamed(file, len)
    }

    fn unnamed(file: File, len: u64) -> Result<OwnedFile> {
        let owned = OwnedFile {
            file,
            path: None,
            dev_ino: (0, 0),
        };
        owned.size(len)?;
        Ok(owned)
    }

    fn size(&self, len: u64) -> Result<()> {
        self.file
            .set_len(len)
            .map_err(|e| Error::Failed(format!("sizing the file to {len} bytes: {e}")))
    }

    /// Drops this file's clean page cache (never the machine's).
    pub fn drop_cache(&self) {
        // SAFETY: fd is open; fadvise only advises.
        unsafe {
            libc::posix_fadvise(self.file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
        }
    }
}

impl Drop for OwnedFile {
    fn drop(&mut self) {
        // Emptied, not fadvised: POSIX_FADV_DONTNEED first writes dirty
        // pages back, which put a page_fault3 file's 128 MiB on the disk
        // after every run and left its writeback running into what ran
        // next. Truncation frees the pages, dirty or not, at once.
        let _ = self.file.set_len(0);
        let Some(path) = &self.path else { return };
        if let Ok(m) = std::fs::symlink_metadata(path)
            && (m.dev(), m.ino()) == self.dev_ino
        {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Maps `len` bytes for one task: of `file` at `offset` when there is one,
/// else anonymous; advised for THP or base pages.
pub fn map(spec: &Spec, len: usize, file: Option<&File>, offset: u64) -> Result<Region> {
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    let mut flags = if spec.shared {
        libc::MAP_SHARED
    } else {
        libc::MAP_PRIVATE | libc::MAP_NORESERVE
    };
    if spec.pages == PageKind::Hugetlb && file.is_none() {
        flags |= libc::MAP_HUGETLB;
    }
    let fd = file.map_or(-1, |f| f.as_raw_fd());
    if file.is_none() {
        flags |= libc::MAP_ANONYMOUS;
    }
    let region = Region::map_at(len, prot, flags, fd, offset as i64).map_err(|e| {
        if spec.pages == PageKind::Hugetlb {
            Error::Failed(format!(
                "mmap of {len} bytes of hugetlb pages failed ({e}): reserve more with \
                 --knob nr_hugepages=N"
            ))
        } else {
            Error::Failed(format!("mmap of {len} bytes failed: {e}"))
        }
    })?;
    match spec.pages {
        PageKind::Base => region.advise_thp(crate::exec::region::Pages::Base)?,
        PageKind::Thp => region.advise_thp(crate::exec::region::Pages::Huge)?,
        PageKind::Hugetlb => {}
    }
    Ok(region)
}

/// HugePages_Free and Hugepagesize (bytes) from /proc/meminfo.
pub fn hugetlb_free() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let get = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|r| r.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    (get("HugePages_Free:"), get("Hugepagesize:") * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_impossible_combinations_with_the_fix() {
        let mut s = Spec {
            backing: Backing::File,
            ..Spec::default()
        };
        assert!(
            s.check(None, None)
                .unwrap_err()
                .to_string()
                .contains("--path")
        );
        s.path = Some("/tmp/x".into());
        s.pages = PageKind::Hugetlb;
        assert!(
            s.check(None, None)
                .unwrap_err()
                .to_string()
                .contains("hugetlbfs")
        );
        let s = Spec {
            backing: Backing::Memfd,
            pages: PageKind::Thp,
            ..Spec::default()
        };
        assert!(
            s.check(Some("always"), Some("never"))
                .unwrap_err()
                .to_string()
                .contains("thp_shmem=advise")
        );
        assert!(s.check(Some("never"), Some("advise")).is_ok());
    }

    #[test]
    fn an_existing_path_is_refused_and_ours_is_removed() {
        let p = crate::scratch::at("f");
        {
            let f = OwnedFile::create(&p, 8192).unwrap();
            assert_eq!(f.file.metadata().unwrap().len(), 8192);
            assert!(
                OwnedFile::create(&p, 8192)
                    .unwrap_err()
                    .to_string()
                    .contains("already exists")
            );
        }
        assert!(!p.exists(), "the created file is removed");
        std::os::unix::fs::symlink("/etc/passwd", &p).unwrap();
        // A symlink is refused as bad input: the path exists.
        crate::error::assert_input(OwnedFile::create(&p, 8192));
    }

    #[test]
    fn a_dropped_file_is_emptied_at_once_though_another_handle_holds_it() {
        use std::io::Write;
        let p = crate::scratch::at("dirty");
        let f = OwnedFile::create(&p, 0).unwrap();
        (&f.file).write_all(&[7u8; 64 * 1024]).unwrap();
        let other = File::open(&p).unwrap();
        drop(f);
        assert!(!p.exists());
        let left = other.metadata().unwrap();
        assert_eq!(
            (left.len(), left.blocks()),
            (0, 0),
            "its dirty pages were dropped, not kept for writeback"
        );
    }
}
