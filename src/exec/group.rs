//! Started commands die with vmscale: each leads its own process group, is
//! sent SIGKILL by the kernel when vmscale dies (PR_SET_PDEATHSIG), and a
//! small guard process kills the whole group (the command's own children
//! too) if vmscale is killed; the group is killed when the command ends.
//!
//! The guard is forked before the command, and the command tells it its
//! group through a pipe before it execs, so there is no moment in which the
//! command could start children that no guard knows about.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};

/// In a freshly forked child: asks for SIGKILL when the parent dies, and
/// leaves at once if the parent already died before the request took
/// effect (the child was re-parented, so getppid differs).
pub fn die_with_parent(parent: libc::pid_t) {
    // SAFETY: prctl, getppid and _exit are async-signal-safe system calls
    // and touch no memory of ours.
    unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        );
        if libc::getppid() != parent {
            libc::_exit(1);
        }
    }
}

/// Makes the command `c` spawns die with vmscale: [`die_with_parent`]
/// in the child before it execs.
pub fn dies_with_vmscale(c: &mut Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: between fork and exec the closure makes only
    // async-signal-safe system calls (prctl, getppid, _exit) and touches
    // no memory of ours.
    unsafe {
        c.pre_exec(move || {
            die_with_parent(parent);
            Ok(())
        });
    }
}

/// A process group that is killed when this value is dropped, or by the
/// guard process when vmscale dies first.
pub struct Group {
    pgid: libc::pid_t,
    guard: Option<libc::pid_t>,
}

impl Group {
    /// Spawns `c` as the leader of a new process group that dies with this
    /// process, watched by a guard started beforehand.
    pub fn spawn(c: &mut Command) -> std::io::Result<(Child, Group)> {
        let parent = std::process::id() as libc::pid_t;
        let (read_end, write_end) = pipe()?;
        let guard = start_guard(parent, read_end);
        let pid_fd = write_end.as_raw_fd();
        c.process_group(0);
        // SAFETY: between fork and exec the closure makes only
        // async-signal-safe system calls (prctl, getpid, write, getppid,
        // _exit); the pipe's write end is closed by exec (O_CLOEXEC).
        unsafe {
            c.pre_exec(move || {
                libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                );
                let me = libc::getpid();
                libc::write(pid_fd, (&me as *const libc::pid_t).cast(), 4);
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
        let spawned = c.spawn();
        drop(write_end);
        match spawned {
            Ok(child) => {
                let group = Group {
                    pgid: child.id() as libc::pid_t,
                    guard,
                };
                Ok((child, group))
            }
            Err(e) => {
                if let Some(pid) = guard {
                    reap_guard(pid);
                }
                Err(e)
            }
        }
    }

    /// Sends `sig` to every process of the group.
    pub fn signal(&self, sig: i32) {
        // SAFETY: kill takes plain integers; the group is ours.
        unsafe { libc::kill(-self.pgid, sig) };
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.signal(libc::SIGKILL);
        if let Some(pid) = self.guard {
            reap_guard(pid);
        }
    }
}

/// A pipe whose ends are closed on exec.
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors are new and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Forks the guard: it reads the group from `read_end` (written by the
/// command before exec) and, once `parent` is gone, kills that group.
/// None if fork failed; the command still dies by PR_SET_PDEATHSIG.
fn start_guard(parent: libc::pid_t, read_end: OwnedFd) -> Option<libc::pid_t> {
    let fd = read_end.as_raw_fd();
    // SAFETY: the guard child makes only async-signal-safe calls (fcntl,
    // poll, read, getppid, kill, usleep, _exit), so forking a process with threads
    // is fine.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        super::held::close_in_child();
        // SAFETY: as above; the loop ends with _exit.
        unsafe { guard_loop(parent, fd) }
    }
    (pid > 0).then_some(pid)
}

/// The guard's whole life. It keeps its own copy of the pipe's write end,
/// so the pipe never reports end-of-file and the poll is a 20 ms sleep when
/// nothing comes.
unsafe fn guard_loop(parent: libc::pid_t, fd: libc::c_int) -> ! {
    // SAFETY: plain system calls on our own descriptor and integers.
    unsafe {
        libc::fcntl(fd, libc::F_SETFL, libc::O_NONBLOCK);
        let mut pgid: libc::pid_t = 0;
        loop {
            let gone = libc::getppid() != parent;
            // Read before deciding: a command started just before vmscale
            // died has already written its pid.
            let mut p = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            libc::poll(&mut p, 1, if gone { 0 } else { 20 });
            let mut got: libc::pid_t = 0;
            if libc::read(fd, (&mut got as *mut libc::pid_t).cast(), 4) == 4 {
                pgid = got;
            }
            if gone {
                // Again until the group is gone (its killed members reaped)
                // or for about a second: a member still being forked when
                // the first signal went out must not be left behind.
                let mut rounds = 0;
                while pgid > 0 && libc::kill(-pgid, libc::SIGKILL) == 0 && rounds < 50 {
                    libc::usleep(20_000);
                    rounds += 1;
                }
                libc::_exit(0);
            }
        }
    }
}

fn reap_guard(pid: libc::pid_t) {
    // SAFETY: the guard is our child; killed and reaped here only.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, std::ptr::null_mut(), 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_is_killed_with_the_command_children() {
        let mut c = Command::new("sh");
        c.args(["-c", "sleep 30 & echo $!; wait"])
            .stdout(std::process::Stdio::piped());
        let (mut child, group) = Group::spawn(&mut c).unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
            &mut line,
        )
        .unwrap();
        let sleeper: i32 = line.trim().parse().unwrap();
        drop(group);
        let _ = child.wait();
        let mut alive = true;
        for _ in 0..100 {
            // SAFETY: signal 0 only checks for existence.
            alive = unsafe { libc::kill(sleeper, 0) } == 0
                && !std::fs::read_to_string(format!("/proc/{sleeper}/stat"))
                    .is_ok_and(|s| s.contains(") Z"));
            if !alive {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(!alive, "the command's child {sleeper} survived");
    }
}
