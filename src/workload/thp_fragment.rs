//! Phase 1 of the thp workload: fragment physical memory before the huge
//! page faults, as mmtests' thpscale (holes punched in anonymous memory)
//! and thpchallenge (many small page-cache files) do. What it makes is
//! held until dropped: the anonymous pages left, and the files, each in a
//! private directory that is removed on drop.

use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::exec::region::Region;

/// How phase 1 fragments memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Touch anonymous memory on base pages, then free every other page:
    /// every 2 MiB block it touched keeps half its pages.
    Anon,
    /// Touch anonymous memory a page at a time while reading small sparse
    /// files a file at a time, then free the anonymous memory: the page
    /// cache is left scattered over the blocks, holes between.
    Files,
    /// No fragmentation: the baseline.
    None,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Anon => "anon",
            Method::Files => "files",
            Method::None => "none",
        }
    }
}

impl Method {
    /// The method a case's variant names (`as_str`).
    pub fn of_case(variant: &str) -> Result<Method> {
        <Method as clap::ValueEnum>::from_str(variant, false)
            .map_err(|_| Error::Failed(format!("bad thp case '{variant}'")))
    }
}

/// What phase 1 holds until dropped: the anonymous pages left, or the
/// page cache of the files read (evicted on drop).
pub struct Held<'a> {
    _anon: Option<Region>,
    files: Option<&'a FileSet>,
    /// Bytes still held: anonymous pages left, or page cache read.
    pub bytes: u64,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if let Some(f) = self.files {
            f.evict();
        }
    }
}

/// Fragments `size` bytes of memory by `method`; `files` is the run's
/// file set (`--fragment files` only).
pub fn fragment<'a>(
    method: Method,
    size: u64,
    page: usize,
    files: Option<&'a mut FileSet>,
) -> Result<Held<'a>> {
    match method {
        Method::None => Ok(Held {
            _anon: None,
            files: None,
            bytes: 0,
        }),
        Method::Anon => {
            let r = touched(size as usize, page)?;
            // Every other page back to the allocator, the page beside it
            // held: no 2 MiB block the region touched can coalesce.
            every_other_page_freed(&r, page)?;
            Ok(Held {
                _anon: Some(r),
                files: None,
                bytes: size / 2,
            })
        }
        Method::Files => {
            let f = files.ok_or_else(|| Error::Failed("--fragment files without files".into()))?;
            let per = f.file_size as usize;
            let anon = Region::map(
                size as usize / 2,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_NORESERVE,
                None,
            )?;
            advise(&anon, libc::MADV_NOHUGEPAGE)?;
            f.ensure(anon.len().div_ceil(per))?;
            // One file's pages, then as many anonymous pages: the page
            // cache lands between pages that are freed below.
            let mut buf = vec![0u8; per];
            let mut off = 0;
            let mut i = 0;
            while off < anon.len() {
                f.read(i, &mut buf)?;
                i += 1;
                for _ in 0..per / page {
                    if off >= anon.len() {
                        break;
                    }
                    // SAFETY: off < len, inside the mapping.
                    unsafe { anon.ptr().add(off).write_volatile(1) };
                    off += page;
                }
            }
            drop(anon);
            let f: &'a FileSet = f;
            Ok(Held {
                _anon: None,
                files: Some(f),
                bytes: (i * per) as u64,
            })
        }
    }
}

/// Anonymous memory on base pages, every page faulted in for writing:
/// by MADV_POPULATE_WRITE (Linux 5.14), else a write to each page. The
/// same pages either way; populating takes the fault path without a trap
/// per page (15 GiB here: 13.6-15.5 s against 27.0-37.0 s, docs/thp.md).
fn touched(len: usize, page: usize) -> Result<Region> {
    let r = Region::map(
        len,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_PRIVATE | libc::MAP_NORESERVE,
        None,
    )?;
    advise(&r, libc::MADV_NOHUGEPAGE)?;
    // SAFETY: the whole of our own mapping.
    if unsafe { libc::madvise(r.ptr().cast(), r.len(), libc::MADV_POPULATE_WRITE) } != 0 {
        for off in (0..r.len()).step_by(page) {
            // SAFETY: off < len, inside the mapping.
            unsafe { r.ptr().add(off).write_volatile(1) };
        }
    }
    Ok(r)
}

/// Ranges a process_madvise call takes at most (UIO_MAXIOV).
const IOV_MAX: usize = 1024;

/// Frees every other page of `r`, from the first: 1024 pages a call by
/// process_madvise on this process (Linux 6.13 takes any advice for the
/// caller itself), else one madvise a page (15 GiB here: 0.48-0.52 s
/// against 3.2 s).
fn every_other_page_freed(r: &Region, page: usize) -> Result<()> {
    let starts = (0..r.len()).step_by(2 * page);
    if let Some(me) = crate::exec::children::pidfd(std::process::id() as libc::pid_t) {
        let mut iov = Vec::with_capacity(IOV_MAX);
        let mut batched = true;
        for off in starts.clone() {
            iov.push(libc::iovec {
                // SAFETY: off < len, inside the mapping.
                iov_base: unsafe { r.ptr().add(off) }.cast(),
                iov_len: page,
            });
            if iov.len() == IOV_MAX {
                batched = advise_pages(&me, &iov);
                if !batched {
                    break;
                }
                iov.clear();
            }
        }
        if batched && (iov.is_empty() || advise_pages(&me, &iov)) {
            return Ok(());
        }
        // The first call is refused on a kernel that does not take the
        // advice, before any page is freed; a later refusal leaves pages
        // that the per-page calls below free again, which is harmless.
    }
    for off in starts {
        dontneed(r, off, page)?;
    }
    Ok(())
}

/// MADV_DONTNEED on the pages of `iov` by process_madvise on `me`: true
/// when the kernel freed them all.
fn advise_pages(me: &OwnedFd, iov: &[libc::iovec]) -> bool {
    let want: usize = iov.iter().map(|v| v.iov_len).sum();
    // SAFETY: iov holds iov.len() ranges of our own mapping; process_madvise
    // reads them and returns the bytes advised or -1.
    let done = unsafe {
        libc::syscall(
            libc::SYS_process_madvise,
            me.as_raw_fd(),
            iov.as_ptr(),
            iov.len(),
            libc::MADV_DONTNEED,
            0,
        )
    };
    usize::try_from(done).is_ok_and(|d| d == want)
}

fn advise(r: &Region, advice: i32) -> Result<()> {
    // SAFETY: the whole of our own mapping.
    if unsafe { libc::madvise(r.ptr().cast(), r.len(), advice) } != 0 {
        return Err(Error::Failed(format!(
            "madvise: {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok(())
}

fn dontneed(r: &Region, off: usize, len: usize) -> Result<()> {
    // SAFETY: off + len lies inside our own mapping (page steps of its length).
    if unsafe { libc::madvise(r.ptr().add(off).cast(), len, libc::MADV_DONTNEED) } != 0 {
        return Err(Error::Failed(format!(
            "madvise(MADV_DONTNEED): {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok(())
}

/// Where `--fragment files` writes, and how big each file is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileSpec {
    pub dir: PathBuf,
    pub file_size: u64,
}

const TMPFS_MAGIC: i64 = 0x0102_1994;
const RAMFS_MAGIC: i64 = 0x8584_58f6;

/// Refuses a directory whose pages would not be page cache the kernel can
/// reclaim and migrate (tmpfs, ramfs: their pages are shared memory, and
/// without swap they would fill memory), one that is a symbolic link or
/// not a directory.
pub fn check_dir(dir: &Path) -> Result<()> {
    let fd = open_dir(dir).map_err(|e| {
        Error::Input(format!(
            "--dir {}: {e}: name an existing directory (not a symbolic link)",
            dir.display()
        ))
    })?;
    // SAFETY: a zeroed statfs is valid; fstatfs fills it from an open fd.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: fd is open and st writable.
    if unsafe { libc::fstatfs(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(Error::io(
            "--dir: cannot statfs",
            dir,
            std::io::Error::last_os_error(),
        ));
    }
    let kind = st.f_type as i64;
    if kind == TMPFS_MAGIC || kind == RAMFS_MAGIC {
        return Err(Error::Input(format!(
            "--dir {} is on {}: its files are shared memory, not page cache the kernel can \
             reclaim; name a directory on a disk file system (ext4, xfs, btrfs)",
            dir.display(),
            if kind == TMPFS_MAGIC {
                "tmpfs"
            } else {
                "ramfs"
            }
        )));
    }
    Ok(())
}

/// A directory opened without following a symbolic link.
fn open_dir(dir: &Path) -> std::io::Result<OwnedFd> {
    let c = CString::new(dir.as_os_str().as_encoded_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: c is a valid C string; the returned fd is checked.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd was just opened and is owned here alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Directory `name` in `parent`, opened without following a link.
fn open_dir_at(parent: &OwnedFd, name: &CStr) -> std::io::Result<OwnedFd> {
    // SAFETY: parent is open, name a valid C string; the fd is checked.
    let fd = unsafe {
        libc::openat(
            parent.as_raw_fd(),
            name.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd was just opened and is owned here alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The run's files: a private directory (mode 0700, made by this
/// process, never an existing one) of sparse files `f0`, `f1`, ... of one
/// size, all removed on drop, by name under the directory's descriptor,
/// so no path is followed.
pub struct FileSet {
    parent: OwnedFd,
    name: CString,
    dir: OwnedFd,
    count: usize,
    file_size: u64,
}

impl FileSet {
    pub fn create(spec: &FileSpec) -> Result<FileSet> {
        let parent_path = &spec.dir;
        let io = |what: &str, e| Error::io(format!("--fragment files: {what}"), parent_path, e);
        let parent = open_dir(parent_path).map_err(|e| io("cannot open", e))?;
        sweep(&parent);
        let name = CString::new(format!(
            "vmscale-thp-{}-{}",
            std::process::id(),
            crate::exec::clock::monotonic_ns()
        ))
        .expect("no NUL in a formatted name");
        // SAFETY: parent is an open directory, name a valid C string.
        if unsafe { libc::mkdirat(parent.as_raw_fd(), name.as_ptr(), 0o700) } != 0 {
            return Err(io(
                "cannot make a directory in",
                std::io::Error::last_os_error(),
            ));
        }
        // O_NOFOLLOW: the entry just made, not a link.
        let dir = match open_dir_at(&parent, &name) {
            Ok(dir) => dir,
            Err(e) => {
                // SAFETY: removing the empty directory just made.
                unsafe { libc::unlinkat(parent.as_raw_fd(), name.as_ptr(), libc::AT_REMOVEDIR) };
                return Err(io("cannot open the directory made in", e));
            }
        };
        Ok(FileSet {
            parent,
            name,
            dir,
            count: 0,
            file_size: spec.file_size,
        })
    }

    fn file_name(i: usize) -> CString {
        CString::new(format!("f{i}")).expect("no NUL in a formatted name")
    }

    /// File `i` opened without following a link (`flags` added).
    fn open(&self, i: usize, flags: i32) -> Result<std::fs::File> {
        let name = Self::file_name(i);
        // SAFETY: dir is open, name a valid C string; the fd is checked.
        let fd = unsafe {
            libc::openat(
                self.dir.as_raw_fd(),
                name.as_ptr(),
                flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                0o600,
            )
        };
        if fd < 0 {
            return Err(Error::Failed(format!(
                "--fragment files: cannot open {}/f{i}: {}",
                self.name.to_string_lossy(),
                std::io::Error::last_os_error()
            )));
        }
        // SAFETY: fd was just opened and is owned here alone.
        Ok(std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Makes the set `n` files long: new sparse files, no byte written.
    fn ensure(&mut self, n: usize) -> Result<()> {
        while self.count < n {
            let f = self.open(self.count, libc::O_RDWR | libc::O_CREAT | libc::O_EXCL)?;
            self.count += 1;
            f.set_len(self.file_size)
                .map_err(|e| Error::Failed(format!("--fragment files: ftruncate: {e}")))?;
        }
        Ok(())
    }

    /// Reads file `i` whole: its holes enter the page cache as pages.
    fn read(&self, i: usize, buf: &mut [u8]) -> Result<()> {
        use std::os::unix::fs::FileExt;
        let f = self.open(i, libc::O_RDONLY)?;
        let mut done = 0;
        while done < buf.len() {
            match f.read_at(&mut buf[done..], done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) => return Err(Error::Failed(format!("--fragment files: read: {e}"))),
            }
        }
        Ok(())
    }

    /// Drops the files' page cache (clean pages: nothing is written).
    fn evict(&self) {
        for i in 0..self.count {
            if let Ok(f) = self.open(i, libc::O_RDONLY) {
                // SAFETY: an open descriptor; advice only.
                unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
            }
        }
    }
}

/// Removes what runs killed before their end left in `parent`: a
/// directory named as [`FileSet::create`] names them, whose process is
/// gone, made by this user with mode 0700; only its `f<N>` entries, by
/// name (a link is removed, never followed), then the directory if empty.
fn sweep(parent: &OwnedFd) {
    let Ok(entries) = std::fs::read_dir(format!("/proc/self/fd/{}", parent.as_raw_fd())) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("vmscale-thp-")
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let Ok(c) = CString::new(name) else { continue };
        let Ok(dir) = open_dir_at(parent, &c) else {
            continue;
        };
        // SAFETY: a zeroed stat is valid; fstat fills it from an open fd.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: dir is open, st writable; geteuid has no preconditions.
        let ours = unsafe { libc::fstat(dir.as_raw_fd(), &mut st) } == 0
            && st.st_uid == unsafe { libc::geteuid() }
            && st.st_mode & 0o777 == 0o700;
        if !ours {
            continue;
        }
        let Ok(files) = std::fs::read_dir(format!("/proc/self/fd/{}", dir.as_raw_fd())) else {
            continue;
        };
        for f in files.flatten() {
            let n = f.file_name().to_string_lossy().into_owned();
            if n.strip_prefix('f')
                .is_some_and(|d| d.parse::<u64>().is_ok())
                && let Ok(fc) = CString::new(n)
            {
                // SAFETY: removing an entry by name under an open directory.
                unsafe { libc::unlinkat(dir.as_raw_fd(), fc.as_ptr(), 0) };
            }
        }
        // SAFETY: as above; fails unless the directory is now empty.
        unsafe { libc::unlinkat(parent.as_raw_fd(), c.as_ptr(), libc::AT_REMOVEDIR) };
    }
}

impl Drop for FileSet {
    fn drop(&mut self) {
        for i in 0..self.count {
            let name = Self::file_name(i);
            // SAFETY: removing our own file by name under our directory.
            unsafe { libc::unlinkat(self.dir.as_raw_fd(), name.as_ptr(), 0) };
        }
        // SAFETY: removing our own (now empty) directory by name.
        unsafe {
            libc::unlinkat(
                self.parent.as_raw_fd(),
                self.name.as_ptr(),
                libc::AT_REMOVEDIR,
            )
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> usize {
        // SAFETY: sysconf has no preconditions.
        unsafe { libc::sysconf(libc::_SC_PAGESIZE) as usize }
    }

    #[test]
    fn anon_holds_half_its_pages() {
        // Less than one batch of freed pages, and more than two with an
        // odd count of pages.
        for pages in [1024, 4096 + 3] {
            let size = (pages * page()) as u64;
            let held = fragment(Method::Anon, size, page(), None).unwrap();
            let r = held._anon.as_ref().unwrap();
            assert_eq!(
                r.resident_pages(page()) as usize,
                pages / 2,
                "{pages} pages"
            );
            // The pages kept are the odd ones: the first of every pair went.
            let mut vec = vec![0u8; pages];
            // SAFETY: the region's own range; vec has a byte per page.
            let rc = unsafe { libc::mincore(r.ptr().cast(), r.len(), vec.as_mut_ptr()) };
            assert_eq!(rc, 0);
            let kept: Vec<usize> = (0..pages).filter(|&i| vec[i] & 1 == 1).collect();
            assert!(kept.iter().all(|i| i % 2 == 1), "{pages} pages: {kept:?}");
        }
    }

    #[test]
    fn files_are_made_in_a_private_directory_and_removed() {
        let parent = crate::scratch::at("");
        if check_dir(&parent).is_err() {
            // The temporary directory is on tmpfs here: nothing to test.
            return;
        }
        let spec = FileSpec {
            dir: parent.to_path_buf(),
            file_size: 16 << 10,
        };
        let mut set = FileSet::create(&spec).unwrap();
        let held = fragment(Method::Files, 1 << 20, page(), Some(&mut set)).unwrap();
        let dirs: Vec<_> = std::fs::read_dir(&parent).unwrap().collect();
        assert_eq!(dirs.len(), 1);
        let d = dirs[0].as_ref().unwrap().path();
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::symlink_metadata(&d).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o700);
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 32);
        assert_eq!(held.bytes, 32 * (16 << 10));
        drop(held);
        // The next sample reads the same files again.
        let again = fragment(Method::Files, 1 << 20, page(), Some(&mut set)).unwrap();
        assert_eq!(again.bytes, 32 * (16 << 10));
        drop(again);
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 32);
        drop(set);
        assert_eq!(std::fs::read_dir(&parent).unwrap().count(), 0);
    }

    #[test]
    fn files_a_killed_run_left_are_swept_and_others_kept() {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        let parent = crate::scratch::at("");
        // No process has a pid above pid_max.
        let dead = std::fs::read_to_string("/proc/sys/kernel/pid_max")
            .unwrap()
            .trim()
            .parse::<u64>()
            .unwrap()
            + 1;
        let make = |name: &str, mode: u32| {
            let d = parent.join(name);
            std::fs::DirBuilder::new().mode(mode).create(&d).unwrap();
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(mode)).unwrap();
            std::fs::write(d.join("f0"), b"x").unwrap();
            d
        };
        let stale = make(&format!("vmscale-thp-{dead}-1"), 0o700);
        std::os::unix::fs::symlink("/etc/passwd", stale.join("f1")).unwrap();
        let open = make(&format!("vmscale-thp-{dead}-2"), 0o755);
        let alive = make(&format!("vmscale-thp-{}-3", std::process::id()), 0o700);
        let other = make("unrelated", 0o700);
        let spec = FileSpec {
            dir: parent.to_path_buf(),
            file_size: 4096,
        };
        drop(FileSet::create(&spec).unwrap());
        assert!(!stale.exists(), "the dead run's directory is swept");
        assert!(Path::new("/etc/passwd").exists());
        for kept in [&open, &alive, &other] {
            assert!(kept.join("f0").exists(), "{}", kept.display());
        }
    }

    #[test]
    fn a_symlink_or_a_tmpfs_directory_is_refused() {
        let link = crate::scratch::at("link");
        std::os::unix::fs::symlink(link.parent().unwrap(), &link).unwrap();
        assert!(matches!(check_dir(&link), Err(Error::Input(_))));
        if Path::new("/dev/shm").is_dir() {
            let e = check_dir(Path::new("/dev/shm")).unwrap_err();
            assert!(e.to_string().contains("tmpfs"), "{e}");
        }
    }
}
