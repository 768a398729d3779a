//! `vmscale reproduce`: from a kernel test robot report to a verdict on
//! this machine. Each step is its own piece: `mime` (quoted-printable
//! bodies decoded), `reader` (a mail) and `job` (lkp's job.yaml) make the
//! typed `report`; the planner turns it and this machine into the vmscale
//! plan; the verdict and the robot-shaped table come after the runs, and
//! `bisection` plans what `--bisect` runs after them. All pure;
//! `commands::reproduce` does the I/O.

pub mod bisection;
pub mod job;
pub mod mime;
pub mod moved;
pub mod planner;
pub mod reader;
pub mod report;
pub mod table;
pub mod verdict;

pub use reader::{read, read_bytes};
pub use report::{ReadError, Report};
