//! Starting N tasks as threads or forked processes, releasing them together
//! and collecting their reports.

use crate::error::{Error, Result};
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};

use super::children;
use super::clock::{self, Usage, Who};
use super::shared::SharedBlock;
use super::{Mode, TaskReport, pin};

/// What a task sees: its index, placement, and the start barrier.
pub struct Task<'a> {
    pub index: usize,
    pub mode: Mode,
    pub cpu: Option<usize>,
    block: &'a SharedBlock,
    arrived: Cell<bool>,
}

impl Task<'_> {
    /// Blocks until every task is ready, then returns at the common start.
    /// Everything before this call (mmap, setup) is outside the timed section.
    pub fn wait_start(&self) {
        self.arrive();
        self.block.wait_release();
    }

    fn arrive(&self) {
        if !self.arrived.replace(true) {
            self.block.arrive();
        }
    }

    /// This task's own usage: RUSAGE_THREAD for threads, RUSAGE_SELF inside
    /// a forked child.
    pub fn usage(&self) -> Usage {
        clock::usage(match self.mode {
            Mode::Thread => Who::Thread,
            Mode::Process => Who::Process,
        })
    }
}

/// The reports of every task of one sample.
pub struct TaskOutcome {
    pub reports: Vec<TaskReport>,
}

fn run_one<F>(index: usize, mode: Mode, cpu: Option<usize>, block: &SharedBlock, body: &F)
where
    F: Fn(&Task) -> TaskReport + Sync,
{
    let task = Task {
        index,
        mode,
        cpu,
        block,
        arrived: Cell::new(false),
    };
    let mut report = match cpu.map(pin::pin_current).transpose() {
        Err(e) => {
            let mut r = TaskReport::default();
            r.fail(&e.to_string());
            r
        }
        Ok(_) => match catch_unwind(AssertUnwindSafe(|| body(&task))) {
            Ok(r) => r,
            Err(_) => {
                let mut r = TaskReport::default();
                r.fail("task panicked");
                r
            }
        },
    };
    report.cpu = cpu.map(|c| c as i64).unwrap_or(-1);
    block.put(index, report);
    // A task that failed before the barrier still counts as arrived, so the
    // others are not left waiting.
    task.arrive();
}

/// Runs `body` in one task per entry of `cpus` (`None` = unpinned).
/// All tasks are started and ready before any is released.
pub fn run_tasks<F>(mode: Mode, cpus: &[Option<usize>], body: F) -> Result<TaskOutcome>
where
    F: Fn(&Task) -> TaskReport + Sync,
{
    let n = cpus.len();
    let block =
        SharedBlock::new(n).map_err(|e| Error::Failed(format!("shared memory for tasks: {e}")))?;
    match mode {
        Mode::Thread => std::thread::scope(|s| {
            let handles: Vec<_> = cpus
                .iter()
                .enumerate()
                .map(|(i, &cpu)| {
                    let (block, body) = (&block, &body);
                    s.spawn(move || run_one(i, mode, cpu, block, body))
                })
                .collect();
            wait_all_arrived(&block, n, || Ok(()))?;
            block.release();
            for h in handles {
                h.join()
                    .map_err(|_| Error::Failed("a task thread panicked".into()))?;
            }
            Ok::<(), Error>(())
        })?,
        Mode::Process => {
            let forked =
                children::Forked::spawn(n, "task", |i| run_one(i, mode, cpus[i], &block, &body))?;
            // An early return drops `forked`, which kills and reaps them.
            wait_all_arrived(&block, n, || {
                forked
                    .exited_early("before the start barrier")
                    .map_or(Ok(()), |m| Err(Error::Failed(m)))
            })?;
            block.release();
            forked.reap()?;
        }
    }
    Ok(TaskOutcome {
        reports: (0..n).map(|i| block.get(i)).collect(),
    })
}

fn wait_all_arrived(
    block: &SharedBlock,
    n: usize,
    mut check: impl FnMut() -> Result<()>,
) -> Result<()> {
    let mut polls = 0u64;
    while (block.arrived() as usize) < n {
        std::thread::yield_now();
        polls += 1;
        if polls.is_multiple_of(1024) {
            check()?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_all_report_and_start_after_release() {
        let out = run_tasks(Mode::Thread, &[None, None, None], |t| {
            t.wait_start();
            let mut r = TaskReport {
                start_ns: clock::monotonic_ns(),
                ..Default::default()
            };
            r.values[0] = t.index as f64;
            r.end_ns = clock::monotonic_ns();
            r
        })
        .unwrap();
        let idx: Vec<f64> = out.reports.iter().map(|r| r.values[0]).collect();
        assert_eq!(idx, vec![0.0, 1.0, 2.0]);
        assert!(out.reports.iter().all(|r| r.error().is_none()));
    }

    #[test]
    fn every_child_is_reaped_when_one_dies() {
        use super::super::region::Region;
        let pids = Region::shared(64).unwrap();
        let err = run_tasks(Mode::Process, &[None, None, None], |t| {
            // SAFETY: getpid has no preconditions.
            let me = unsafe { libc::getpid() } as u64;
            pids.u64_at(8 * t.index)
                .store(me, std::sync::atomic::Ordering::Release);
            t.wait_start();
            if t.index == 0 {
                // SAFETY: ends this forked child at once.
                unsafe { libc::_exit(3) };
            }
            TaskReport::default()
        })
        .err()
        .unwrap()
        .to_string();
        assert!(err.contains("task 0") && err.contains("status 3"), "{err}");
        for i in 0..3 {
            let pid = pids
                .u64_at(8 * i)
                .load(std::sync::atomic::Ordering::Acquire);
            assert!(pid > 0);
            let left = crate::exec::children::peek(pid as libc::pid_t);
            assert_eq!(left, None, "task {i} (pid {pid}) was left unreaped");
        }
    }

    #[test]
    fn failure_before_barrier_does_not_hang() {
        let out = run_tasks(Mode::Thread, &[None, None], |t| {
            let mut r = TaskReport::default();
            if t.index == 0 {
                r.fail("setup failed");
                return r;
            }
            t.wait_start();
            r
        })
        .unwrap();
        assert_eq!(out.reports[0].error().as_deref(), Some("setup failed"));
        assert!(out.reports[1].error().is_none());
    }
}
