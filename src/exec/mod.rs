//! Launching tasks: N threads or N processes, each pinned where asked,
//! released together by a barrier, each reporting its own clocks and usage
//! through shared memory.

use crate::error::{Error, Result};

pub mod again;
pub mod children;
pub mod clock;
pub mod fault_counter;
pub mod group;
pub mod held;
mod launch;
pub mod layout;
pub mod pin;
pub mod region;
mod reports;
pub mod shared;
pub mod signals;
pub mod sys;

pub use launch::{Task, TaskOutcome, run_tasks};
pub use reports::{first_error, first_error_as, first_start_ns, wall_ns};

use serde::{Deserialize, Serialize};

/// How tasks are made: threads of one process, or separate processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    #[value(alias = "threads")]
    Thread,
    #[value(alias = "processes")]
    Process,
}

impl Mode {
    pub fn as_str(&self) -> &'static str {
        match self {
            Mode::Thread => "thread",
            Mode::Process => "process",
        }
    }
}

impl std::str::FromStr for Mode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "thread" | "threads" => Ok(Mode::Thread),
            "process" | "processes" => Ok(Mode::Process),
            _ => Err(Error::Input(format!(
                "unknown mode '{s}': use thread or process"
            ))),
        }
    }
}

/// Number of workload-defined values a task can report.
pub const VALUES: usize = 8;

/// What one task reports. Plain old data so it can sit in shared memory.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct TaskReport {
    /// Start and end of the timed section, CLOCK_MONOTONIC ns.
    pub start_ns: u64,
    pub end_ns: u64,
    pub user_ns: u64,
    pub sys_ns: u64,
    pub minflt: u64,
    pub majflt: u64,
    /// Workload-defined values (e.g. pages touched, mmap time).
    pub values: [f64; VALUES],
    /// The CPU the task was pinned to, or -1.
    pub cpu: i64,
    /// Non-empty (NUL-terminated) when the task failed.
    pub error: [u8; 160],
}

impl Default for TaskReport {
    fn default() -> Self {
        TaskReport {
            start_ns: 0,
            end_ns: 0,
            user_ns: 0,
            sys_ns: 0,
            minflt: 0,
            majflt: 0,
            values: [0.0; VALUES],
            cpu: -1,
            error: [0; 160],
        }
    }
}

impl TaskReport {
    /// Records the usage of the timed section.
    pub fn set_usage(&mut self, u: &clock::Usage) {
        self.user_ns = u.user_ns;
        self.sys_ns = u.sys_ns;
        self.minflt = u.minflt;
        self.majflt = u.majflt;
    }

    /// Marks the report failed with a message (truncated to fit).
    pub fn fail(&mut self, msg: &str) {
        let bytes = msg.as_bytes();
        let n = bytes.len().min(self.error.len() - 1);
        self.error[..n].copy_from_slice(&bytes[..n]);
        self.error[n] = 0;
    }

    pub fn error(&self) -> Option<String> {
        let end = self.error.iter().position(|&b| b == 0).unwrap_or(0);
        (end > 0).then(|| String::from_utf8_lossy(&self.error[..end]).into_owned())
    }
}

/// The last OS error as text, for task failure messages.
pub fn errno_text() -> String {
    std::io::Error::last_os_error().to_string()
}

/// This process's effective user id.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}
