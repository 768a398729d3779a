//! The typed report: what a kernel test robot mail (or lkp's job.yaml)
//! says, as the reader found it. Every field is optional where a report
//! may leave it out or be cut before it; nothing here is computed. [`ReadError`]
//! says why a text is not a report.

use serde::Serialize;

/// One robot report: its headline, its commits and its tests (the first
/// is the one the headline names; the "In addition to that" boxes follow).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Which text it was read from.
    pub source: Source,
    pub headline: Option<Change>,
    pub base: Option<Commit>,
    pub head: Option<Commit>,
    pub tests: Vec<Test>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The mail ("kernel test robot noticed ..." or "Greeting, FYI, ...").
    Mail,
    /// lkp's job.yaml: one commit, no table.
    JobYaml,
}

/// A headline: "a -21.4% regression of vm-scalability.throughput".
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub metric: String,
    /// The %change, signed as the table's row of the metric has it (newer
    /// mails print the headline's size unsigned).
    pub percent: f64,
    pub kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Regression,
    Improvement,
}

/// A commit as the report names it: an id (full or abbreviated) and the
/// subject in its `("...")`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Commit {
    pub id: String,
    pub subject: Option<String>,
}

/// One test of the report with its own table.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Test {
    pub testcase: Option<String>,
    /// Its parameters (`nr_task: 100%`, `mode: process`, ...) in the
    /// report's order.
    pub params: Vec<(String, String)>,
    pub machine: Option<Machine>,
    /// The axis line (`compiler/cpufreq_governor/.../testcase:`) and its
    /// values, key by key, in order.
    pub axes: Vec<(String, String)>,
    /// A box's own headline ("hackbench.throughput 7.7% regression").
    pub change: Option<Change>,
    pub rows: Vec<Row>,
    /// The table ran to the end of the text: the report was cut inside it.
    pub cut: bool,
}

impl Test {
    /// A parameter, or else the axis value of that name.
    pub fn param(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .chain(&self.axes)
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// This test with the axis line, rows and machine of the table
    /// `section` read after "Details are as below".
    pub fn with_table(self, section: Test) -> Test {
        Test {
            axes: section.axes,
            rows: section.rows,
            cut: section.cut,
            machine: self.machine.or(section.machine),
            ..self
        }
    }

    /// The testcase: as the report says it, else the axis line's.
    pub fn testcase(&self) -> Option<&str> {
        self.testcase.as_deref().or_else(|| self.param("testcase"))
    }
}

/// The robot's test machine: "224 threads 2 sockets Intel(R) Xeon(R)
/// Platinum 8480CTDX (Sapphire Rapids) with 256G memory".
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Machine {
    /// The tbox name where the report gives it (`lkp-spr-2sp4`).
    pub name: Option<String>,
    pub threads: Option<u64>,
    pub sockets: Option<u64>,
    pub nodes: Option<u64>,
    pub cpu: Option<String>,
    /// Bytes.
    pub memory: Option<u64>,
}

/// One row of a `%stddev %change %stddev` table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub name: String,
    pub base: f64,
    /// ± stddev, percent of the mean (`None`: the column was empty).
    pub base_stddev: Option<f64>,
    /// `None` where the robot printed a change no number holds (`+Inf%`).
    pub change: Option<Delta>,
    pub head: f64,
    pub head_stddev: Option<f64>,
}

/// The `%change` column: a percent, or for rows of percentages
/// (`perf-stat.i.cache-miss-rate%`, `mpstat.cpu.all.sys%`, perf-profile)
/// the absolute difference.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Delta {
    Percent(f64),
    Absolute(f64),
}

/// Why a text is not a report vmscale can read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error(
        "this is not a kernel test robot report: no \"noticed a N% regression of METRIC\" \
         headline, no `testcase:` and no `%stddev %change %stddev` table was found; give the \
         robot's mail (as saved from the list, or a reply quoting it) or the job.yaml it links to"
    )]
    NotAReport,
    #[error(
        "the report is cut before its test: it has {found} but no `testcase:` with its \
         parameters and no axis line (`compiler/.../testcase:`); give the whole mail"
    )]
    NoTestcase { found: String },
    #[error(
        "the job.yaml has no `testcase:` line at its top level; give the job.yaml the \
         report links to, unchanged"
    )]
    JobWithoutTestcase,
}

impl From<ReadError> for crate::error::Error {
    fn from(e: ReadError) -> Self {
        crate::error::Error::Input(e.to_string())
    }
}
